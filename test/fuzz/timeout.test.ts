// The fuzz suite allowed itself exactly six minutes, whatever `tap --timeout` said, so a longer exploration
// (FUZZ_RUNS, FUZZ_SEED) was cut before it reached the Redis backend. The file tells the runner its timeout over
// tap's IPC channel at load (after tap's own, which repeats TAP_TIMEOUT): that second message is read here from the
// real file, then the child is stopped.
import { test } from 'tap'
import { fork } from 'node:child_process'
import { join } from 'node:path'

async function askedTimeout (env: Record<string, string>): Promise<number> {
  const child = fork(join(__dirname, 'api.test.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, TAP: '', TAP_CHILD_ID: '', ...env },
    stdio: ['ignore', 'ignore', 'ignore', 'ipc']
  })
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the fuzz file sent no timeout within 90 s')), 90_000)
      let seen = 0
      child.on('message', (m: { setTimeout?: number }) => {
        if (typeof m?.setTimeout === 'number' && ++seen === 2) { clearTimeout(timer); resolve(m.setTimeout) }
      })
      child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the fuzz file exited (${code}) before it sent its timeout`)) })
    })
  } finally {
    child.kill('SIGKILL')
  }
}

test('the command line decides a longer bound; the file never shortens it', async (t) => {
  t.equal(await askedTimeout({ TAP_TIMEOUT: '1800' }), 1_800_000, 'tap --timeout 1800 gives the fuzz 30 minutes')
  t.equal(await askedTimeout({ TAP_TIMEOUT: '120', FUZZ_RUNS: '300' }), 1_080_000, 'three times the runs, three times the default bound')
  t.equal(await askedTimeout({ TAP_TIMEOUT: '120' }), 360_000, 'the default run keeps its six minutes over a shorter command line')
})
