// Client input inside a Redis key. Keys are `<prefix>:<kind>:<part>…` joined by ':', so a part that holds a ':'
// could name another record's key (scan 'x:state' against scan 'x''s state hash). Encoding ':' and the escape
// character itself makes the mapping injective; text without either (every UUID, most ids) is left as it was,
// so keys written before the encoding existed still read back.
const RESERVED = /[%:]/g

export function keySegment (text: string): string {
  return text.replace(RESERVED, (c) => c === '%' ? '%25' : '%3A')
}
