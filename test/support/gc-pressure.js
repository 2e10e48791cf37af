// Preloaded into a CLI child (`node --expose-gc --require ...`): a full collection every 20 ms, so that anything held
// only weakly (a composite AbortSignal, a Request's follower signal) is collected while the command waits.
'use strict'
if (typeof global.gc !== 'function') throw new Error('gc-pressure needs --expose-gc')
setInterval(() => { global.gc() }, 20).unref()
