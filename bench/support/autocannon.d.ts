// autocannon ships no type declarations: the part of its programmatic API the benchmarks use.
declare module 'autocannon' {
  function autocannon (opts: autocannon.Options): Promise<autocannon.Result>

  namespace autocannon {
    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      p50: number
      p90: number
      p99: number
      total: number
  }

  interface Options {
    url: string
    connections?: number
    duration?: number
    pipelining?: number
    method?: string
    headers?: Record<string, string>
    timeout?: number
  }

  interface Result {
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    mismatches: number
    '2xx': number
    duration: number
  }

  }

  export = autocannon
}
