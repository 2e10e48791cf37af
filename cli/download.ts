// A document the API streams (a report, a CycloneDX or OpenVEX file) written to a file or to stdout as it comes.
import { createWriteStream } from 'node:fs'
import { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { answerError, CliError, EXIT, networkError, print, type Context } from './context'

/**
 * Write the streamed answer to `output`; without it, to stdout when stdout is a pipe or a file, and to `fallback` in
 * the current directory on a terminal (which would show markup or a screenful of JSON). Says what it wrote.
 */
export async function download (ctx: Context, asked: () => Promise<{ response: Response, data?: unknown, error?: unknown }>,
  output: string | undefined, fallback: string, what: string): Promise<void> {
  let result
  try {
    result = await asked()
  } catch (err) {
    throw networkError(err, ctx.baseUrl)
  }
  const { response } = result
  if (!response.ok) throw answerError(response, result.error)
  const body = result.data as ReadableStream<Uint8Array> | null | undefined
  if (body === null || body === undefined) throw new CliError(`vulnscan answered ${response.status} without a document`, EXIT.API)
  const source = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>)
  const file = output ?? (ctx.io.stdout.isTTY === true ? fallback : undefined)
  if (file === undefined) {
    // stdout stays open for whatever follows; only the document's bytes go to it.
    await pipeline(source, new Writable({ write: (chunk, _enc, done) => { ctx.io.stdout.write(chunk, done) } }))
    return
  }
  let bytes = 0
  source.on('data', (chunk: Buffer) => { bytes += chunk.length })
  await pipeline(source, createWriteStream(file))
  print(ctx.io, `Wrote ${what} to ${file} (${bytes} bytes).`)
}
