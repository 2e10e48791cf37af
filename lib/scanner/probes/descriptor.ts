// What one protocol module declares so that the detection engine can run it without knowing the
// protocol: where it lives (ports, TLS ports), who speaks first, what to send, how to recognise and
// parse a reply, an optional conversation, how to upgrade with STARTTLS, and which products it can
// name (each of which must have a CPE mapping; test/lib/scanner/probes/registry.test.ts checks).

import type { ProbeIO, ProbeMatch } from './common'

/** What a conversation may ask of the engine besides its own connection. */
export interface ProbeSession {
  host: string
  port: number
  signal: AbortSignal
  /** Milliseconds to wait for one reply: `capMs` (default: the level's probe wait) within the budget. */
  wait (capMs?: number): number
  /** Quiet time after some bytes that ends a read with no framing to go by. */
  idleMs: number
  /** The conversation runs inside TLS (and `open` gives TLS connections too). */
  secure: boolean
  /** Another connection to the same port, TLS when this one is, closed by the engine at the end (null when refused). */
  open (): Promise<ProbeIO | null>
  /** Every registered signature tried on a reply. */
  recognise (reply: Buffer): ProbeMatch | null
}

/** What a conversation learned: the match (null: let the engine try every signature) and the reply to keep as banner. */
export interface ProbeOutcome {
  match: ProbeMatch | null
  reply: Buffer
}

/** How a text protocol asks to upgrade its connection to TLS. */
export interface StartTlsDialogue {
  /** Capability request, and the sign in its answer that STARTTLS is offered. */
  ask?: { send: Buffer, done: (r: Buffer) => boolean, offered: RegExp }
  command: Buffer
  done: (r: Buffer) => boolean
  ok: RegExp
}

/**
 * A second question for a banner no signature claimed: an FTP-or-SMTP `220` is settled by how
 * the server answers EHLO.
 */
export interface BannerClarifier {
  applies (banner: Buffer): boolean
  send: Buffer
  done (answer: Buffer): boolean
  decide (banner: Buffer, answer: Buffer): ProbeMatch | null
}

export interface ProbeDescriptor {
  /** Unique name; also the `service` its matches carry unless they say otherwise. */
  name: string
  /** Plain-text ports where this protocol is the usual one. */
  ports: number[]
  /**
   * Ports where TLS comes first and this protocol runs inside it. A port that some probe also
   * lists as plain is tried plain first (Redis on 6380) and unwrapped only as a fallback.
   */
  tlsPorts?: number[]
  /** The server talks first (a banner): on its plain ports the engine waits for one before sending. */
  serverFirst?: boolean
  /** A banner this protocol frames its own way (not at the first line end), and when it is complete. */
  banner?: { claims (reply: Buffer): boolean, complete (reply: Buffer): boolean }
  /** The signature tried on every reply, whatever provoked it (a banner, another probe's request). */
  recognise?: (reply: Buffer, port: number) => ProbeMatch | null
  /** One request and how to read and parse its reply; the engine falls back to every signature. */
  request?: (target: { host: string, port: number }) => Buffer
  complete?: (reply: Buffer) => boolean
  parse?: (reply: Buffer, port: number) => ProbeMatch | null
  /** A conversation instead of one request (several exchanges, a second connection). */
  converse?: (io: ProbeIO, session: ProbeSession) => Promise<ProbeOutcome>
  /**
   * A recognised banner that names no version is not the end: `converse` goes on over the same
   * connection (IRC registers after its NOTICE lines to read RPL_MYINFO).
   */
  continueAfterBanner?: boolean
  /** The probe is a TLS handshake: the engine unwraps the port and identifies what runs inside. */
  handshake?: boolean
  /** Which detection level also tries this probe on ports that are not its own. */
  fallback?: 'light' | 'full'
  /** Inside TLS, the protocol to try when the port names none and no banner comes (HTTP). */
  tlsDefault?: boolean
  /** ALPN protocol ids that mean this protocol runs inside the TLS session. */
  alpn?: string[]
  /** The service name its matches take inside TLS (http -> https). */
  tlsService?: string
  /** A reply that, although plain text, says the port wants TLS. */
  hintsTls?: (reply: Buffer) => boolean
  clarify?: BannerClarifier
  starttls?: StartTlsDialogue
  /** Politeness: what to send before closing so the server logs a normal session end. */
  farewell?: Buffer
  /** Every product name its signatures can report. */
  products: string[]
  /**
   * The probe also reports product names read verbatim off the wire (an AMQP `product` property,
   * an unknown HTTP `Server` token); those have a CPE only when lib/cpe/aliases.ts knows them.
   */
  verbatimProducts?: boolean
}
