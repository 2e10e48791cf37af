// The daemon launcher lives in bench/support/debian-daemon.ts, shared with the service-detection lab
// (bench/service-detect.ts --lab); tests keep importing it from here.
export * from '../../bench/support/debian-daemon'
