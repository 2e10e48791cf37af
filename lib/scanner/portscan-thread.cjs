'use strict'
// The connect executor of the port scan: opens TCP connections as cheaply as the runtime allows and
// reports one raw outcome per attempt. It holds no scan policy (retries, RTT estimates, host state
// live in portscan.ts). Plain CommonJS on purpose: worker threads load this file directly, and the
// TypeScript loaders we run under (tsx, tap's) do not hook worker threads.

const net = require('node:net')
const util = require('node:util')
const { isMainThread, parentPort, workerData } = require('node:worker_threads')

const OPEN = 0
const CLOSED = 1
const TIMEOUT = 2
const UNREACH = 3
const RESOURCE = 4
const FILTERED = 5
const SELF = 6
const ABORTED = 7

const OUTCOME_BY_ERRNO = {
  ECONNREFUSED: CLOSED,
  ETIMEDOUT: TIMEOUT,
  EHOSTUNREACH: UNREACH,
  ENETUNREACH: UNREACH,
  EHOSTDOWN: UNREACH,
  ENETDOWN: UNREACH,
  EAFNOSUPPORT: UNREACH,
  EINVAL: UNREACH,
  EMFILE: RESOURCE,
  ENFILE: RESOURCE,
  ENOBUFS: RESOURCE,
  ENOMEM: RESOURCE,
  EAGAIN: RESOURCE,
  EADDRNOTAVAIL: RESOURCE
}

// libuv status codes differ by platform; resolve each distinct one to its name once.
const outcomeByStatus = new Map()
function outcomeOf (status) {
  let o = outcomeByStatus.get(status)
  if (o === undefined) {
    let name = ''
    try { name = util.getSystemErrorName(status) } catch { name = '' }
    o = OUTCOME_BY_ERRNO[name]
    if (o === undefined) o = FILTERED
    outcomeByStatus.set(status, o)
  }
  return o
}

const outcomeByCode = (code) => {
  const o = OUTCOME_BY_ERRNO[code]
  return o === undefined ? FILTERED : o
}

// Node's internal TCP handle skips the Socket/stream machinery, which is most of the per-connection
// cost of net.connect. It is an internal API, so every piece is checked and net.Socket is the fallback.
let raw = null
try {
  const b = typeof process.binding === 'function' ? process.binding('tcp_wrap') : null
  if (b && typeof b.TCP === 'function' && typeof b.TCPConnectWrap === 'function' && b.constants &&
      typeof b.TCP.prototype.connect === 'function' && typeof b.TCP.prototype.connect6 === 'function' &&
      typeof b.TCP.prototype.getsockname === 'function') {
    raw = b
  }
} catch {
  raw = null
}

const SWEEP_MS = 10

// A socket whose connect was refused is connected again for the next port of the same host instead of
// being closed and a new one opened: on a closed-port sweep this spares a socket() and a close() per
// port (a fifth of the kernel's time for the scan, and the handle's allocation). Linux allows a TCP
// socket to connect again once a connect failed: the first connect() after the failure reports the
// old state (ECONNABORTED, after the error was read) and resets the socket, including its source
// address; the next one connects as a new socket's would. Any other answer, and the attempt falls back
// to a new socket, so the outcome is what a new socket would have given. Elsewhere every attempt opens
// a socket of its own. At most SPARE_MAX refused sockets wait for reuse per thread.
const REUSE_REFUSED = process.platform === 'linux'
const SPARE_MAX = 64
const ECONNABORTED_STATUS = -require('node:os').constants.errno.ECONNABORTED

/**
 * @param {(id: number, outcome: number, rttUs: number, localPort: number) => void} report called once
 *   per started attempt; localPort is set for OPEN when we connected from the target's own address
 *   (abortHost reports ABORTED, abortAll reports nothing); may be called synchronously from start().
 * @param {{ useRaw?: boolean, reuse?: boolean, connect?: Function }} [options] `connect(address, port, family, cb)`
 *   replaces the socket layer (tests); cb(errorCode | null, localAddress, localPort); returns a closer.
 *   `reuse: false` opens a new socket for every attempt (see REUSE_REFUSED).
 */
function createExecutor (report, options = {}) {
  const injected = typeof options.connect === 'function' ? options.connect : null
  const useRaw = injected === null && raw !== null && options.useRaw !== false
  const reuse = useRaw && REUSE_REFUSED && options.reuse !== false
  /** @type {{ address: string, family: number }[]} */
  let hosts = []
  // Live attempts, for the deadline sweep and for aborts: swap-remove keeps it dense.
  const live = []
  let sweepTimer = null
  let sweepPending = false
  let lastTick = 0

  function finish (a, outcome, localPort = 0) {
    if (a.done) return
    a.done = true
    const i = a.index
    const last = live.pop()
    if (last !== a) { live[i] = last; last.index = i }
    const rtt = (outcome === OPEN || outcome === CLOSED || outcome === SELF)
      ? Math.max(1, Math.round((performance.now() - a.started) * 1000))
      : 0
    if (live.length === 0) stopSweep()
    report(a.id, outcome, rtt, localPort)
  }

  function discard (a) {
    if (a.done) return
    a.done = true
    const i = a.index
    const last = live.pop()
    if (last !== a) { live[i] = last; last.index = i }
    closeAttempt(a, false)
    if (live.length === 0) stopSweep()
  }

  function abort (a) {
    if (a.done) return
    finish(a, ABORTED)
    closeAttempt(a, false)
  }

  function closeAttempt (a, reset) {
    if (a.handle) {
      const h = a.handle
      a.handle = null
      if (reset && typeof h.reset === 'function') {
        // RST rather than FIN: no TIME_WAIT left behind for every open port we touch.
        if (h.reset() !== 0) h.close()
      } else {
        h.close()
      }
    } else if (a.cancel) {
      const c = a.cancel
      a.cancel = null
      c()
    } else if (a.socket) {
      const s = a.socket
      a.socket = null
      if (reset && typeof s.resetAndDestroy === 'function') s.resetAndDestroy()
      else s.destroy()
    }
  }

  // Handles whose connect completed are closed together after the poll phase rather than one by one
  // from its callbacks: libuv's close of a descriptor scans the poll's whole batch of pending events
  // for it (up to 1,024 at our concurrency), which costs more than the close itself when done from
  // inside that batch. Open ports are reset (RST, no TIME_WAIT), the others closed.
  let toClose = []
  let toReset = []
  let closesQueued = false
  function closeLater (h, reset) {
    if (reset) toReset.push(h)
    else toClose.push(h)
    if (!closesQueued) {
      closesQueued = true
      setImmediate(closeQueued)
    }
  }
  function closeQueued () {
    closesQueued = false
    const c = toClose
    const r = toReset
    toClose = []
    toReset = []
    for (let i = 0; i < c.length; i++) c[i].close()
    for (let i = 0; i < r.length; i++) {
      const h = r[i]
      if (typeof h.reset !== 'function' || h.reset() !== 0) h.close()
    }
  }

  function onRawComplete (status, handle) {
    const a = this.attempt
    if (a.done) return
    const h = a.handle
    a.handle = null
    if (status === 0) {
      const local = {}
      handle.getsockname(local)
      const sameAddress = local.address === hosts[a.host].address
      const self = sameAddress && local.port === a.port
      // The local port matters only when we connected from the target's own address: two of our
      // sockets can then reach each other (port X to Y while Y to X), which the scan must undo.
      finish(a, self ? SELF : OPEN, sameAddress ? local.port : 0)
      if (h !== null) closeLater(h, true)
    } else {
      const outcome = outcomeOf(status)
      if (h !== null) {
        if (reuse && outcome === CLOSED && !short) keepSpare(a.host, h)
        else closeLater(h, false)
      }
      // Out of descriptors or ports: give back the ones kept, and keep none for the rest of the scan.
      if (outcome === RESOURCE && !short) {
        short = true
        closeSpares()
      }
      finish(a, outcome)
    }
  }

  // Refused sockets by host index, kept for that host's next ports (see REUSE_REFUSED).
  const spare = new Map()
  let spareCount = 0
  let short = false
  let reused = 0

  function keepSpare (hostIndex, h) {
    if (spareCount >= SPARE_MAX) {
      // Make room by closing one kept for the host that has waited longest (most likely finished).
      for (const [k, list] of spare) {
        closeLater(list.pop(), false)
        spareCount--
        if (list.length === 0) spare.delete(k)
        break
      }
    }
    let list = spare.get(hostIndex)
    if (list === undefined) {
      list = []
      spare.set(hostIndex, list)
    }
    list.push(h)
    spareCount++
  }

  function takeSpare (hostIndex) {
    const list = spare.get(hostIndex)
    if (list === undefined) return null
    const h = list.pop()
    spareCount--
    if (list.length === 0) spare.delete(hostIndex)
    return h
  }

  function closeSpares () {
    for (const list of spare.values()) for (const h of list) h.close()
    spare.clear()
    spareCount = 0
  }

  function newRequest (a) {
    const req = new raw.TCPConnectWrap()
    req.oncomplete = onRawComplete
    req.attempt = a
    return req
  }

  function rawConnect (h, a, host, port) {
    return host.family === 6 ? h.connect6(newRequest(a), host.address, port) : h.connect(newRequest(a), host.address, port)
  }

  /** Connects a refused socket again; true when the connect is under way as a new socket's would be. */
  function reconnect (h, a, host, port) {
    let err = rawConnect(h, a, host, port)
    if (err === ECONNABORTED_STATUS) err = rawConnect(h, a, host, port)
    return err === 0
  }

  // An attempt past its deadline is only given up at the sweep after the one that saw it late: an
  // event-loop iteration, and so a poll for completions, lies between them. Only then do we know the
  // answer was not already waiting for us while this thread was busy or not scheduled at all.
  // The sweep itself runs from setImmediate, after the poll phase of its iteration.
  let sweeps = 0
  function sweep () {
    sweepPending = false
    sweeps++
    const now = performance.now()
    for (let i = live.length - 1; i >= 0; i--) {
      const a = live[i]
      if (a === undefined || a.deadline > now) continue
      if (a.lateSince === 0) {
        a.lateSince = sweeps
      } else if (a.lateSince < sweeps) {
        finish(a, TIMEOUT)
        closeAttempt(a, false)
      }
    }
  }

  function tick () {
    const now = performance.now()
    const lag = now - lastTick - SWEEP_MS
    lastTick = now
    if (lag > SWEEP_MS * 3) {
      // We were not running: time passed for us, not for the peers. Give the replies a chance.
      for (const a of live) {
        a.deadline += lag
        a.lateSince = 0
      }
      return
    }
    if (!sweepPending) {
      sweepPending = true
      setImmediate(sweep)
    }
  }

  function startSweep () {
    if (sweepTimer === null) {
      lastTick = performance.now()
      sweepTimer = setInterval(tick, SWEEP_MS)
    }
  }

  function stopSweep () {
    if (sweepTimer !== null) {
      clearInterval(sweepTimer)
      sweepTimer = null
    }
  }

  function start (id, hostIndex, port, timeoutMs) {
    const host = hosts[hostIndex]
    const now = performance.now()
    const a = { id, host: hostIndex, port, started: now, deadline: now + timeoutMs, lateSince: 0, done: false, index: live.length, handle: null, socket: null, cancel: null }
    live.push(a)
    startSweep()
    if (injected !== null) {
      const cancel = injected(host.address, port, host.family, (code, localAddress, localPort) => {
        if (a.done) return
        if (code) finish(a, outcomeByCode(code))
        else {
          const sameAddress = localAddress === host.address
          finish(a, sameAddress && localPort === port ? SELF : OPEN, sameAddress && localPort ? localPort : 0)
        }
        closeAttempt(a, false)
      })
      if (!a.done) a.cancel = cancel
      else if (typeof cancel === 'function') cancel()
    } else if (useRaw) {
      if (reuse && spareCount > 0) {
        const h = takeSpare(hostIndex)
        if (h !== null) {
          a.handle = h
          if (reconnect(h, a, host, port)) {
            reused++
            return
          }
          a.handle = null
          closeLater(h, false)
        }
      }
      const h = new raw.TCP(raw.constants.SOCKET)
      a.handle = h
      const err = rawConnect(h, a, host, port)
      if (err !== 0) {
        const outcome = outcomeOf(err)
        if (outcome === RESOURCE && !short) {
          short = true
          closeSpares()
        }
        finish(a, outcome)
        closeAttempt(a, false)
      }
    } else {
      const s = new net.Socket()
      a.socket = s
      s.once('connect', () => {
        if (a.done) return
        const sameAddress = s.localAddress === host.address
        finish(a, sameAddress && s.localPort === port ? SELF : OPEN, sameAddress ? s.localPort : 0)
        closeAttempt(a, true)
      })
      s.once('error', (e) => {
        if (a.done) return
        finish(a, outcomeByCode(e && e.code))
        closeAttempt(a, false)
      })
      s.connect({ host: host.address, port, family: host.family })
    }
  }

  return {
    setHosts (list) { hosts = list },
    start,
    abortHost (hostIndex) {
      for (let i = live.length - 1; i >= 0; i--) {
        const a = live[i]
        if (a !== undefined && a.host === hostIndex) abort(a)
      }
    },
    // A host's first round trips usually show that the initial timeout was far too generous.
    retime (hostIndex, timeoutMs) {
      for (const a of live) {
        if (a.host === hostIndex && a.started + timeoutMs < a.deadline) a.deadline = a.started + timeoutMs
      }
    },
    abortAll () {
      while (live.length > 0) discard(live[live.length - 1])
      stopSweep()
      closeSpares()
      short = false
      if (closesQueued) closeQueued()
    },
    get inflight () { return live.length },
    /** Attempts made on a refused socket connected again (tests). */
    get reused () { return reused },
    get raw () { return useRaw }
  }
}

// Worker side. A worker serves one scan at a time and is then kept for the next one, so every
// scan starts with a 'hosts' message carrying a new epoch; results go out as
// [epoch, id, outcome, rttUs, localPort, id, …] so that late results of an earlier scan are told apart.
// Work comes in as [id, hostIndex, port, timeoutMs, …].
function runWorker () {
  let epoch = 0
  let out = [0]
  let flushQueued = false
  const flush = () => {
    flushQueued = false
    if (out.length <= 1) return
    const batch = Float64Array.from(out)
    out = [epoch]
    parentPort.postMessage(batch, [batch.buffer])
  }
  const ex = createExecutor((id, outcome, rtt, localPort) => {
    out.push(id, outcome, rtt, localPort)
    if (!flushQueued) {
      flushQueued = true
      setImmediate(flush)
    }
  }, { useRaw: workerData.useRaw })
  parentPort.on('message', (m) => {
    if (m instanceof Float64Array) {
      for (let i = 0; i + 3 < m.length; i += 4) ex.start(m[i], m[i + 1], m[i + 2], m[i + 3])
    } else if (m.op === 'hosts') {
      ex.abortAll()
      epoch = m.epoch
      out = [epoch]
      ex.setHosts(m.hosts)
    } else if (m.op === 'retime') {
      ex.retime(m.host, m.timeoutMs)
    } else if (m.op === 'abortHost') {
      ex.abortHost(m.host)
    } else if (m.op === 'abortAll') {
      ex.abortAll()
      out = [epoch]
    }
  })
}

if (!isMainThread && workerData && workerData.vulnscanPortscan === true) runWorker()

module.exports = {
  createExecutor,
  rawAvailable: raw !== null,
  OUTCOME: { OPEN, CLOSED, TIMEOUT, UNREACH, RESOURCE, FILTERED, SELF, ABORTED }
}
