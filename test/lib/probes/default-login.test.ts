// The empty-password MySQL login packet, and which checks run without and with `intrusive`.
import t from 'tap'
import { mysqlLogin } from '../../../lib/scanner/checks/default-login'
import { checksFor } from '../../../lib/scanner/checks/index'
import { CHECKS } from '../../../lib/scanner/checks/catalogue'

t.test('HandshakeResponse41 for root, empty auth response', async (t) => {
  const p = mysqlLogin('root', 1)
  t.equal(p.readUIntLE(0, 3), p.length - 4)
  t.equal(p[3], 1, 'sequence after the greeting')
  t.equal(p.readUInt32LE(4) & 0x200, 0x200, 'protocol 41')
  t.equal(p.subarray(36, 41).toString('latin1'), 'root\0')
  t.equal(p[41], 0, 'auth response of length 0')
  t.equal(p.subarray(42).toString('latin1'), 'mysql_native_password\0')
})

t.test('default-login checks run only when the scan asks for intrusive checks', async (t) => {
  const ids = (intrusive: boolean): string[] => checksFor({ service: 'mysql', product: 'MariaDB', cpe: [] }, undefined, intrusive).flatMap((c) => c.ids)
  t.notOk(ids(false).includes('VULNSCAN-MYSQL-EMPTY-PASSWORD'))
  t.ok(ids(true).includes('VULNSCAN-MYSQL-EMPTY-PASSWORD'))
  t.same(CHECKS.filter((c) => c.intrusive === true).map((c) => c.id), ['VULNSCAN-MYSQL-EMPTY-PASSWORD'])
})
