// The expression language of templates: helper functions, operators, interpolation, and refusal of what it lacks.
import { test } from 'tap'
import { evalExpression, expressionProblem, interpolate, versionCompare } from '../../../lib/templates/dsl'
import { runMatcher } from '../../../lib/templates/match'

test('helpers compute as documented', async (t) => {
  const v = { data: 'Redis_Version:7.2.4\r\n', n: 3 }
  t.equal(evalExpression('to_lower(data)', v), 'redis_version:7.2.4\r\n')
  t.equal(evalExpression('to_upper("ab")', v), 'AB')
  t.equal(evalExpression('contains(to_lower(data), "redis_version")', v), true)
  t.equal(evalExpression('starts_with(data, "Redis")', v), true)
  t.equal(evalExpression('ends_with(trim_space(data), "7.2.4")', v), true)
  t.equal(evalExpression('regex("[0-9]+\\\\.[0-9]+", data)', v), true)
  t.equal(evalExpression('len(data) > n', v), true)
  t.equal(evalExpression('hex_encode("AB")', v), '4142')
  t.equal(evalExpression('hex_decode("4142")', v), 'AB')
  t.equal(evalExpression('base64("hello")', v), 'aGVsbG8=')
  t.equal(evalExpression('base64_decode("aGVsbG8=")', v), 'hello')
  t.equal(evalExpression('md5("a")', v), '0cc175b9c0f1b6a831c399e269772661')
  t.equal(evalExpression('sha1("a")', v), '86f7e437faa5a7fce15d1ddcb9eaeaea377667b8')
  t.equal(evalExpression('sha256("a")', v), 'ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb')
  t.equal(evalExpression('replace("a-b-c", "-", "+")', v), 'a+b+c')
  t.equal(evalExpression('concat("a", 1, "b")', v), 'a1b')
  t.equal(evalExpression('trim("xxaxx", "x")', v), 'a')
  t.equal(evalExpression('compare_versions("7.2.4", "< 7.2.5", ">= 7.0")', v), true)
  t.equal(evalExpression('compare_versions("7.2.10", "<= 7.2.9")', v), false)
  t.equal(evalExpression('"a" + "b" == "ab" && !false', v), true)
  t.equal(evalExpression('data =~ "Version:7"', v), true)
  t.equal(evalExpression('n == "3"', v), true, 'a number equals its decimal text')
  t.equal(evalExpression('len(data) > 3 ? "long" : "short"', v), 'long')
})

test('versions compare by number, segment by segment', async (t) => {
  t.equal(versionCompare('1.10', '1.9'), 1)
  t.equal(versionCompare('5.0.51a', '5.0.51'), 1)
  t.equal(versionCompare('2.0', '2.0.0'), 0)
})

test('unknown names throw at evaluation; unknown functions are a load-time problem', async (t) => {
  t.throws(() => evalExpression('missing + 1', {}), /unknown name/)
  t.match(expressionProblem('exec("id")'), /unsupported DSL function\(s\): exec/)
  t.match(expressionProblem('contains(data,'), /does not parse/)
  t.equal(expressionProblem('contains(data, "x")'), null)
  t.match(expressionProblem('data.length'), /unsupported expression construct/)
})

test('interpolation replaces each marker by its value', async (t) => {
  t.equal(interpolate('PING {{Host}}:{{Port}} {{to_upper("x")}}', { Host: '127.9.0.1', Port: '6380' }), 'PING 127.9.0.1:6380 X')
  t.throws(() => interpolate('{{nothere}}', {}), /unknown name/)
})

test('word matchers interpolate their markers', async (t) => {
  const m = { type: 'word' as const, part: 'data', condition: 'or' as const, negative: false, caseInsensitive: false, internal: false, values: ['port {{Port}}'], sizes: [] }
  t.equal(runMatcher(m, { data: 'listening on port 6380', request: '' }, { Port: '6380' }).ok, true)
  t.equal(runMatcher(m, { data: 'listening on port 6380', request: '' }, {}).ok, false, 'an unknown name is no match')
})
