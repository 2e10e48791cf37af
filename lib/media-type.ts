// Content negotiation for routes that can answer in more than one media type.

/**
 * The offered type the Accept header prefers (by q, then by specificity, then by the order offered), or null
 * when it accepts none of them. A missing or empty header accepts anything: the first offered type.
 */
export function negotiate (accept: string | undefined, offered: string[]): string | null {
  if (accept === undefined || accept.trim() === '') return offered[0] ?? null
  let best: { type: string, q: number, specificity: number, index: number } | null = null
  for (const part of accept.slice(0, 1024).split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim())
    if (range === '') continue
    let q = 1
    for (const p of params) {
      const m = /^q=([0-9.]+)$/.exec(p)
      if (m) q = Number(m[1])
    }
    if (!(q > 0)) continue
    const [type, sub] = range.split('/')
    offered.forEach((o, index) => {
      const ot = o.split('/')[0]
      const specificity = range === o ? 2 : type === ot && sub === '*' ? 1 : range === '*/*' ? 0 : -1
      if (specificity < 0) return
      if (best === null || q > best.q || (q === best.q && (specificity > best.specificity || (specificity === best.specificity && index < best.index)))) {
        best = { type: o, q, specificity, index }
      }
    })
  }
  return (best as { type: string } | null)?.type ?? null
}
