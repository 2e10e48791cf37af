import { test } from 'tap'
import { passesFilter } from '../../../lib/webhooks/events'
import { CONFIDENCE_TABLE, confidenceFor, labelOf, parseMinConfidence, scoreOf, scoreOfFinding } from '../../../lib/domain/confidence'

test('the table: every kind once, surest first, each score naming one kind, labels derived from scores', async (t) => {
  const scores = CONFIDENCE_TABLE.map((r) => r.score)
  t.same([...scores].sort((a, b) => b - a), scores, 'surest first')
  t.equal(new Set(scores).size, scores.length, 'a score names one kind')
  t.equal(new Set(CONFIDENCE_TABLE.map((r) => r.kind)).size, CONFIDENCE_TABLE.length)
  t.same([scoreOf('package'), scoreOf('banner-upstream'), scoreOf('cna-range'), scoreOf('default-status')], [97, 80, 70, 25])
  t.same(confidenceFor('banner-upstream'), { confidence: 'high', confidenceScore: 80 })
  t.same(confidenceFor('cna-range'), { confidence: 'medium', confidenceScore: 70 })
  t.same(confidenceFor('banner-family'), { confidence: 'medium', confidenceScore: 50 })
  t.same(confidenceFor('distribution-shipped'), { confidence: 'low', confidenceScore: 40 })
  t.same([labelOf(100), labelOf(80), labelOf(79), labelOf(50), labelOf(49), labelOf(0)], ['high', 'high', 'medium', 'medium', 'low', 'low'])
})

test('findings without a score get the one their source, rule and label stand for', async (t) => {
  t.equal(scoreOfFinding({ source: 'distribution', rule: 'package openssh 1:9.2p1-2+deb12u3 >= …', confidence: 'high' }), 97, 'credentialed package data')
  t.equal(scoreOfFinding({ source: 'template' as 'nvd', rule: 'template: x', confidence: 'high' }), 85, 'a template match')
  t.equal(scoreOfFinding({ source: 'vulnscan', rule: 'vulnscan: …', confidence: 'high' }), 95, 'an exposure check')
  t.equal(scoreOfFinding({ source: 'nvd', rule: 'nvd: …', confidence: 'medium' }), 50)
  t.equal(scoreOfFinding({ source: 'nvd', rule: 'nvd: …', confidence: 'low', confidenceScore: 20 }), 20, 'a given score stands')
  t.equal(scoreOfFinding({ source: 'nvd', rule: 'nvd: …', confidence: 'low', confidenceScore: 140 }), 100, 'bounded')
})

test('minConfidence: a number 0-100 or a label for its floor', async (t) => {
  t.same(['70', '0', '100', 'high', 'Medium', 'low', 80].map(parseMinConfidence), [70, 0, 100, 80, 50, 0, 80])
  t.same(['101', '-1', 'sure', '7.5', ''].map(parseMinConfidence), [undefined, undefined, undefined, undefined, undefined])
})

test('webhook filters: a label as before, or a score to reach', async (t) => {
  const f = { severity: 'high' as const, kev: null, confidence: 'medium' as const, confidenceScore: 70 }
  t.ok(passesFilter(f, { minConfidence: 'medium' }))
  t.notOk(passesFilter(f, { minConfidence: 'high' }))
  t.ok(passesFilter(f, { minConfidence: 70 }))
  t.notOk(passesFilter(f, { minConfidence: 71 }))
})
