// What one UDP protocol module declares so that the UDP scan can run it without knowing the
// protocol. UDP has no connection to tell an open port from a silent one: the probe's request is
// what makes an open port answer, so the request and its parser are the whole protocol here, and
// a reply is at once the proof that the port is open and what detection learns from it.

import type { ProbeMatch } from '../common'

export interface UdpProbeDescriptor {
  transport: 'udp'
  /** Unique name; also the `service` its matches carry unless they say otherwise. */
  name: string
  /** Ports where this protocol is the usual one: its request is the one sent there. */
  ports: number[]
  /** One datagram that a server of this protocol answers. */
  request (target: { host: string, port: number }): Buffer
  /** What a reply datagram says, or null when it is not this protocol's answer. */
  parse (reply: Buffer, port: number): ProbeMatch | null
  /** Every product name its parser can report (each must have a CPE mapping). */
  products: string[]
}
