// Files of one JSON document per line, as the embedded stores keep them: read streamed (gzip recognised by its
// magic bytes), written whole to a temporary file beside the target and renamed over it, so a crash mid-save
// leaves the previous file intact. A stamp tells a store whether another process replaced its file.

import { createReadStream, createWriteStream, promises as fsp } from 'node:fs'
import { once } from 'node:events'
import path from 'node:path'
import readline from 'node:readline'
import { randomBytes } from 'node:crypto'
import { PassThrough } from 'node:stream'
import { createGunzip, createGzip } from 'node:zlib'

/** What identifies one version of a file (mtime, size, inode); null when there is no file. */
export async function fileStamp (file: string): Promise<string | null> {
  try {
    const st = await fsp.stat(file)
    return `${st.mtimeMs}:${st.size}:${st.ino}`
  } catch {
    return null
  }
}

/** The lines of a file, gzip or plain; null when there is no file. */
export async function readLines (file: string): Promise<AsyncIterable<string> | null> {
  let fh
  try {
    fh = await fsp.open(file, 'r')
  } catch {
    return null
  }
  const head = Buffer.alloc(2)
  try {
    await fh.read(head, 0, 2, 0)
  } finally {
    await fh.close()
  }
  const raw = createReadStream(file, { highWaterMark: 1 << 20 })
  const input = head[0] === 0x1f && head[1] === 0x8b ? raw.pipe(createGunzip()) : raw
  raw.on('error', (err) => input.destroy(err))
  return readline.createInterface({ input, crlfDelay: Infinity })
}

/**
 * Write the lines `produce` hands to `write` as the new content of `file` (gzip when its name ends in .gz),
 * atomically. Returns the new file's stamp.
 */
export async function writeLinesAtomic (file: string, produce: (write: (line: string) => Promise<void>) => Promise<void>): Promise<string | null> {
  await fsp.mkdir(path.dirname(path.resolve(file)), { recursive: true })
  const tmp = `${file}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`
  try {
    const out = createWriteStream(tmp)
    const gz: NodeJS.WritableStream = file.endsWith('.gz') ? createGzip({ level: 1 }) : new PassThrough()
    ;(gz as unknown as NodeJS.ReadableStream).pipe(out)
    // Lines are gathered into large writes: one zlib call per line would dominate the save.
    let pending = ''
    await produce(async (line) => {
      pending += line + '\n'
      if (pending.length < 1 << 20) return
      const chunk = pending
      pending = ''
      if (!gz.write(chunk)) await once(gz, 'drain')
    })
    gz.end(pending)
    await once(out, 'close')
    const fh = await fsp.open(tmp, 'r')
    try {
      await fh.sync()
    } finally {
      await fh.close()
    }
    await fsp.rename(tmp, file)
    return await fileStamp(file)
  } catch (err) {
    await fsp.rm(tmp, { force: true })
    throw err
  }
}
