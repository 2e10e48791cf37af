// `vulnscan schedule …` and `vulnscan webhook …` without a server: usage errors exit 2 with a hint before any request
// (the URL is a loopback port nothing listens on), per-command help with examples, and the overview.
import { test } from 'tap'
import { cli } from '../support/cli'
import { loopbackAddress } from '../support/loopback'

test('schedule: usage errors and help need no server', async (t) => {
  const env = { VULNSCAN_URL: `http://${loopbackAddress()}:9`, VULNSCAN_API_KEY: 'k' }
  const cases: Array<[string[], RegExp]> = [
    [['schedule'], /schedule needs one of: list, show, create, update, delete, enable, disable/],
    [['schedule', 'show'], /schedule show needs one schedule id/],
    [['schedule', 'create', '10.0.0.1'], /Required option '--cron <expression>' not specified/],
    [['schedule', 'create', '--cron', '@daily'], /schedule create needs at least one target or --target-tag/],
    [['schedule', 'create', '10.0.0.1', '--cron', '@daily', '--priority', '9'], /--priority must be an integer from 1 to 5, not '9'/],
    [['schedule', 'create', '10.0.0.1', '--cron', '@daily', '--template', 'huge'], /--template must be one of: quick, standard, full, discovery/],
    [['schedule', 'create', '10.0.0.1', '--cron', '@daily', '--tz', ' '], /--tz must not be empty/],
    [['schedule', 'update', 'abc'], /schedule update needs something to change/],
    [['schedule', 'update', 'abc', '--template', 'huge'], /--template must be one of/],
    [['schedule', 'enable'], /schedule enable needs one schedule id/]
  ]
  // Four at a time: each is a process of its own that spends most of its time starting.
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4)
    const runs = await Promise.all(batch.map(([args]) => cli(args, env)))
    batch.forEach(([args, message], j) => {
      const r = runs[j]
      t.equal(r.code, 2, `${args.join(' ')}: exit 2`)
      t.match(r.stderr, message, args.join(' '))
      t.match(r.stderr, /Run 'vulnscan --help' for usage\./, 'with the usage hint')
      t.equal(r.stdout, '', 'and nothing on stdout')
    })
  }

  const overview = await cli(['--help'], env)
  for (const command of ['schedule list', 'schedule show <schedule-id>', 'schedule create [target…]', 'schedule update <schedule-id> [target…]', 'schedule delete <schedule-id>',
    'schedule enable <schedule-id>', 'schedule disable <schedule-id>']) {
    // A long command name has its summary on the next line.
    t.match(overview.stdout, new RegExp(`\n  ${command.replace(/[[\]]/g, '\\$&')}[ \n]`), `the overview lists ${command}`)
  }

  const help = await cli(['schedule', 'create', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: vulnscan schedule create \[options\] \[target\.\.\.\]/)
  t.match(help.stdout, /Examples:\n {2}vulnscan schedule create 10\.20\.0\.0\/24 --cron '0 3 \* \* 1-5' --tz Europe\/Paris/)
})

test('webhook: usage errors and help need no server', async (t) => {
  const env = { VULNSCAN_URL: `http://${loopbackAddress()}:9`, VULNSCAN_API_KEY: 'k' }
  const cases: Array<[string[], RegExp]> = [
    [['webhook'], /webhook needs one of: list, show, create, update, delete, test, deliveries/],
    [['webhook', 'create', '--url', 'https://hooks.example.com/x', '--event', 'scan.failed'], /webhook create needs the URL to post to.*--url is the service's address/],
    [['webhook', 'create', 'https://hooks.example.com/x'], /webhook create needs --event: scan\.completed, scan\.failed, scan\.cancelled, finding\.new/],
    [['webhook', 'create', 'https://hooks.example.com/x', '--event', 'scan.started'], /--event must be one of: scan\.completed, scan\.failed, scan\.cancelled, finding\.new \(got 'scan\.started'\)/],
    [['webhook', 'create', 'https://hooks.example.com/x', '--event', 'finding.new', '--min-severity', 'urgent'], /--min-severity must be one of: critical, high, medium, low, none/],
    [['webhook', 'create', 'https://hooks.example.com/x', '--event', 'finding.new', '--format', 'xml'], /--format must be one of: json, slack/],
    [['webhook', 'create', 'https://hooks.example.com/x', '--event', 'finding.new', '--no-kev-only'], /'webhook create' does not take --no-kev-only/],
    [['webhook', 'update', 'abc'], /webhook update needs something to change/],
    [['webhook', 'update', 'abc', '--enable', '--disable'], /cannot be used with option '--disable'/],
    [['webhook', 'update', 'abc', '--min-confidence', 'certain'], /--min-confidence must be one of: high, medium, low/],
    [['webhook', 'deliveries', 'abc', '--limit', '0'], /--limit must be an integer from 1 to 500/]
  ]
  // Four at a time: each is a process of its own that spends most of its time starting.
  for (let i = 0; i < cases.length; i += 4) {
    const batch = cases.slice(i, i + 4)
    const runs = await Promise.all(batch.map(([args]) => cli(args, env)))
    batch.forEach(([args, message], j) => {
      const r = runs[j]
      t.equal(r.code, 2, `${args.join(' ')}: exit 2`)
      t.match(r.stderr, message, args.join(' '))
      t.match(r.stderr, /Run 'vulnscan --help' for usage\./, 'with the usage hint')
      t.equal(r.stdout, '', 'and nothing on stdout')
    })
  }

  const overview = await cli(['--help'], env)
  for (const command of ['webhook list', 'webhook show <webhook-id>', 'webhook create <url>', 'webhook update <webhook-id>',
    'webhook delete <webhook-id>', 'webhook test <webhook-id>', 'webhook deliveries <webhook-id>']) {
    // A long command name has its summary on the next line.
    t.match(overview.stdout, new RegExp(`\n  ${command.replace(/[[\]]/g, '\\$&')}[ \n]`), `the overview lists ${command}`)
  }
  t.match(overview.stdout, /\nThe CI gate \(scan, status, host, vulns\):/, 'webhook\'s --min-confidence is its own filter, not the CI gate\'s')
  t.match(overview.stdout, /webhook create <url>[^\n]*\n(?: {4}[^\n]*\n)*? {4}--min-confidence <level> +finding\.new: only findings of this confidence or\s+higher/)

  const help = await cli(['webhook', 'create', '--help'], env)
  t.equal(help.code, 0)
  t.match(help.stdout, /^Usage: vulnscan webhook create \[options\] <url>/)
  t.match(help.stdout, /Examples:\n {2}vulnscan webhook create https:\/\/hooks\.example\.com\/vulnscan --event scan\.failed --event finding\.new/)
})
