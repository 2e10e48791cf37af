// The loopback addresses and free ports live in bench/support/loopback.ts, shared with the benchmarks that
// start the same daemons; tests keep importing them from here.
export { freePort, loopbackAddress } from '../../bench/support/loopback'
