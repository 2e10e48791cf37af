// Bind shells against bytes recorded from socat handing connections to sh and to bash -i (fixtures' .source.txt).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { parse, readShell } from '../../../lib/scanner/probes/shell'
import { REGISTRY } from '../../../lib/scanner/probes/index'

const fixture = (name: string): Buffer => readFileSync(path.join(__dirname, '../../fixtures/banners', name))

t.test('bash -i greets with its prompt after its no-terminal warnings: a root shell', async (t) => {
  const greeting = fixture('socat-bash-greeting.bin')
  t.same(readShell(greeting), { prompt: 'bash-5.2#', root: true })
  t.same(parse(greeting), { service: 'bindshell', extraInfo: 'root shell; prompt "bash-5.2#"' })
  t.equal(REGISTRY.recognise(greeting, 31337)?.probe.name, 'bindshell', 'recognised as a banner on any port')
  t.match(parse(fixture('socat-bash-id.bin')), { extraInfo: 'root shell; prompt "bash-5.2#"; uid=0(root) gid=0(root) groups=0(root)' })
})

t.test('a silent sh answers id', async (t) => {
  t.same(parse(fixture('socat-sh-id.bin')), { service: 'bindshell', extraInfo: 'root shell; uid=0(root) gid=0(root) groups=0(root)' })
  t.same(parse(Buffer.from('uid=1000(alice) gid=1000(alice) groups=1000(alice),27(sudo)\n')),
    { service: 'bindshell', extraInfo: 'shell; uid=1000(alice) gid=1000(alice) groups=1000(alice),27(sudo)' })
})

t.test('prompts, and what is not one', async (t) => {
  for (const p of ['# ', '$ ', 'sh-5.2# ', 'bash-4.4$ ', 'root@metasploitable:/# ', '[root@host ~]# ']) t.ok(readShell(Buffer.from(p)), p)
  for (const b of ['220 mail ESMTP ready\r\n', 'login: ', 'Password: ', 'HTTP/1.1 400 Bad Request\r\n\r\n$ ', '+OK ready $ ', '-ERR unknown command \'id\'\r\n']) {
    t.equal(readShell(Buffer.from(b)), null, JSON.stringify(b))
  }
})
