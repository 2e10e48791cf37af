import { Type } from '@sinclair/typebox'
import { pageOf, ref } from './common'

export const TlsInfoSchema = Type.Object({
  protocol: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  issuer: Type.Optional(Type.String()),
  notBefore: Type.Optional(Type.String()),
  notAfter: Type.Optional(Type.String()),
  selfSigned: Type.Optional(Type.Boolean())
}, { $id: 'TlsInfo' })

export const HostPortSchema = Type.Object({
  port: Type.Integer({ minimum: 1, maximum: 65535 }),
  protocol: Type.Literal('tcp'),
  state: Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('filtered')]),
  service: Type.Optional(Type.String()),
  product: Type.Optional(Type.String()),
  version: Type.Optional(Type.String()),
  extraInfo: Type.Optional(Type.String()),
  distro: Type.Optional(Type.String()),
  cpe: Type.Optional(Type.Array(Type.String())),
  banner: Type.Optional(Type.String()),
  tls: Type.Optional(ref(TlsInfoSchema))
}, { $id: 'HostPort' })

export const HostSchema = Type.Object({
  address: Type.String(),
  hostnames: Type.Array(Type.String()),
  up: Type.Boolean(),
  firstSeen: Type.String({ format: 'date-time' }),
  lastSeen: Type.String({ format: 'date-time' }),
  lastScanId: Type.String(),
  rttMs: Type.Optional(Type.Number()),
  ports: Type.Array(ref(HostPortSchema)),
  findingsCount: Type.Integer({ minimum: 0 }),
  maxSeverity: Type.Union([Type.String(), Type.Null()])
}, { $id: 'Host' })

export const PageHostSchema = pageOf(HostSchema, 'PageHost')
