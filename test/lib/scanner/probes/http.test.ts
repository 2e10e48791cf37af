import fs from 'node:fs'
import path from 'node:path'
import { test } from 'tap'
import { complete, parse, parseResponse, parseVersionDocument, request, followUpPath } from '../../../../lib/scanner/probes/http'

const b = (s: string): Buffer => Buffer.from(s, 'latin1')
/** A stored documented response or body (test/fixtures/banners, each with its source beside it). */
const fixture = (name: string): string => fs.readFileSync(path.join(__dirname, '../../../fixtures/banners', name), 'utf8')
/** A fixture printed as status line, headers, blank line, body: sent with CRLF and a Content-Length for its body. */
const documented = (name: string): Buffer => {
  const text = fixture(name)
  const split = text.indexOf('\n\n')
  const body = text.slice(split + 2)
  const head = text.slice(0, split).split('\n').filter((l) => !/^Content-Length:/i.test(l))
  return Buffer.concat([b(head.join('\r\n') + `\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`), Buffer.from(body, 'utf8')])
}
const reply = (headers: string, body = ''): Buffer =>
  b(`HTTP/1.1 200 OK\r\n${headers}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)

test('request carries Host (IPv6 bracketed, port when not default) and asks to close', async (t) => {
  t.match(request('example.com', 80).toString(), /^GET \/ HTTP\/1\.1\r\nHost: example\.com\r\n/)
  t.match(request('::1', 8080).toString(), /Host: \[::1\]:8080\r\n/)
  t.match(request('10.0.0.1', 8080).toString(), /Connection: close\r\n\r\n$/)
})

test('Server header products', async (t) => {
  t.same(parse(reply('Server: nginx/1.22.1\r\n')), { service: 'http', product: 'nginx', version: '1.22.1', extraInfo: 'status 200' })
  t.same(parse(reply('Server: Apache/2.4.57 (Debian)\r\n')),
    { service: 'http', product: 'Apache httpd', version: '2.4.57', distro: 'Debian', extraInfo: 'Debian; status 200' })
  t.match(parse(reply('Server: Apache/2.4.6 (CentOS) OpenSSL/1.0.2k-fips PHP/7.4.33\r\n')),
    { product: 'Apache httpd', version: '2.4.6', distro: 'CentOS', extraInfo: 'CentOS; OpenSSL/1.0.2k-fips PHP/7.4.33; status 200' })
  t.match(parse(reply('Server: Microsoft-IIS/10.0\r\nX-Powered-By: ASP.NET\r\n')), { product: 'Microsoft IIS httpd', version: '10.0', extraInfo: 'powered by ASP.NET; status 200' })
  t.match(parse(reply('Server: lighttpd/1.4.69\r\n')), { product: 'lighttpd', version: '1.4.69' })
  t.match(parse(reply('Server: Caddy\r\n')), { product: 'Caddy' })
  t.match(parse(reply('Server: Jetty(9.4.51.v20230217)\r\n')), { product: 'Jetty', version: '9.4.51.v20230217' })
  t.match(parse(reply('Server: openresty/1.21.4.1\r\n')), { product: 'OpenResty', version: '1.21.4.1' })
  t.match(parse(reply('Server: SomeThing/3.2\r\n')), { product: 'SomeThing', version: '3.2' })
})

test('product pages when the header says little', async (t) => {
  const tomcat = '<!doctype html><html lang="en"><head><title>HTTP Status 404 – Not Found</title></head><body><h1>HTTP Status 404 – Not Found</h1><hr class="line" /><h3>Apache Tomcat/9.0.83</h3></body></html>'
  t.match(parse(reply('', tomcat)), { product: 'Apache Tomcat', version: '9.0.83' })
  t.match(parse(reply('Server: Apache-Coyote/1.1\r\n', tomcat)), { product: 'Apache Tomcat', version: '9.0.83' })
  const nginx404 = '<html>\r\n<head><title>404 Not Found</title></head>\r\n<body>\r\n<center><h1>404 Not Found</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n</body>\r\n</html>\r\n'
  t.match(parse(b(`HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Length: ${nginx404.length}\r\n\r\n${nginx404}`)),
    { product: 'nginx', version: '1.18.0', extraInfo: 'title "404 Not Found"; status 404' })
  const apache = '<hr>\n<address>Apache/2.4.41 (Ubuntu) Server at 10.0.0.5 Port 80</address>\n</body></html>\n'
  t.match(parse(reply('', apache)), { product: 'Apache httpd', version: '2.4.41' })
  t.match(parse(reply('Server: Jetty\r\n', '<hr/><a href="https://eclipse.org/jetty">Powered by Jetty:// 10.0.18</a><hr/>')), { product: 'Jetty', version: '10.0.18' })
  t.match(parse(reply('Server: Cowboy\r\n', '<!doctype html><html><head><title>RabbitMQ Management</title>')), { product: 'RabbitMQ Management' })
  t.match(parse(reply('', '<title>IIS Windows Server</title>')), { product: 'Microsoft IIS httpd' })
})

test('Elasticsearch root document and a secured cluster', async (t) => {
  const doc = JSON.stringify({
    name: 'node-1', cluster_name: 'elasticsearch', cluster_uuid: 'k8f3rA1oQ9yGgk1S8zQ0Aw',
    version: { number: '8.11.1', build_flavor: 'default', build_type: 'docker', build_hash: '6f9ff581fbcde658e6f69d6ce03050f060d1fd0c', build_date: '2023-11-11T10:05:59.421038163Z', build_snapshot: false, lucene_version: '9.8.0', minimum_wire_compatibility_version: '7.17.0', minimum_index_compatibility_version: '7.0.0' },
    tagline: 'You Know, for Search'
  }, null, 2)
  t.same(parse(reply('X-elastic-product: Elasticsearch\r\ncontent-type: application/json\r\n', doc)),
    { service: 'http', product: 'Elasticsearch', version: '8.11.1', extraInfo: 'cluster elasticsearch; Lucene 9.8.0; flavor default; no authentication required' })
  const os = JSON.stringify({ name: 'n', cluster_name: 'c', version: { distribution: 'opensearch', number: '2.11.0', lucene_version: '9.7.0' }, tagline: 'The OpenSearch Project: https://opensearch.org/' })
  t.match(parse(reply('', os)), { product: 'OpenSearch', version: '2.11.0' })
  const unauth = b('HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm="security" charset="UTF-8"\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}')
  t.same(parse(unauth), { service: 'http', product: 'Elasticsearch', extraInfo: 'authentication required' })
})

test('framing: Content-Length, chunked, bodiless statuses', async (t) => {
  const partial = b('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc')
  t.notOk(complete(partial))
  t.ok(complete(b('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc')))
  const chunked = b('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n<titl\r\nf\r\ne>Hello</title>\r\n0\r\n\r\n')
  t.ok(complete(chunked))
  t.equal(parseResponse(chunked)?.body.toString(), '<title>Hello</title>')
  t.notOk(complete(b('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab')))
  t.ok(complete(b('HTTP/1.1 304 Not Modified\r\nServer: nginx\r\n\r\n')))
  t.notOk(complete(b('HTTP/1.1 200 OK\r\nServer: ngi')), 'headers not finished')
})

test('not HTTP', async (t) => {
  t.equal(parse(b('SSH-2.0-OpenSSH_9.2p1\r\n')), null)
  t.equal(parse(b('HTTP/9 what')), null)
  t.equal(parse(Buffer.from([0x15, 3, 1, 0, 2, 2, 0x46])), null)
})

test('a page title refines the version in the Server header, never contradicts it', async (t) => {
  const cups = '<HTML><HEAD><TITLE>Home - CUPS 2.4.2</TITLE></HEAD></HTML>'
  t.match(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', cups)), { product: 'CUPS', version: '2.4.2' })
  t.match(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', '<TITLE>Bad Request - CUPS v2.4.2</TITLE>')), { product: 'CUPS', version: '2.4.2' })
  t.notOk(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', cups))?.versionPrefix, 'a whole version from the title')
  t.match(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', '')), { product: 'CUPS', version: '2.4', versionPrefix: true }, 'the header alone: only the leading part')
  t.match(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', '<TITLE>Home - CUPS 2.5.0</TITLE>')), { product: 'CUPS', version: '2.4' }, 'another release on the page is not taken')
  t.match(parse(reply('Server: CUPS/2.4 IPP/2.1\r\n', '<TITLE>Home</TITLE>')), { product: 'CUPS', version: '2.4' })
  t.match(parse(reply('Server: tinyproxy/1.11.1\r\n', '<p><em>Generated by tinyproxy version 1.11.1.</em></p>')), { product: 'tinyproxy', version: '1.11.1' })
})

test('HAProxy by its pages, Varnish and Squid by the Via header', async (t) => {
  const b503 = '<html><body><h1>503 Service Unavailable</h1>\nNo server is available to handle this request.\n</body></html>\n'
  t.match(parse(b(`HTTP/1.1 503 Service Unavailable\r\ncontent-length: ${b503.length}\r\n\r\n${b503}`)), { product: 'HAProxy', version: undefined })
  t.match(parse(reply('', '<title>Statistics Report for HAProxy on lb1</title><body>HAProxy version 2.6.12-1+deb12u4, released 2026/10/17')),
    { product: 'HAProxy', version: '2.6.12' })
  t.match(parse(reply('Server: Varnish\r\nVia: 1.1 varnish (Varnish/7.1)\r\n')), { product: 'Varnish', version: '7.1' })
  t.match(parse(reply('Server: Varnish\r\n')), { product: 'Varnish', version: undefined })
  t.match(parse(reply('Server: nginx/1.22.1\r\nVia: 1.1 varnish (Varnish/7.1)\r\n')), { product: 'nginx', version: '1.22.1' }, 'a cache in front does not rename the server')
  t.match(parse(reply('Server: squid\r\nVia: 1.1 proxy (squid/5.7)\r\n')), { product: 'Squid http proxy', version: '5.7' })
})

test('leads from / to where a server names itself: etcd, Docker Engine, Kubernetes, Prometheus', async (t) => {
  const notFound = b('HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: 19\r\n\r\n404 page not found\n')
  t.equal(followUpPath(notFound), '/version')
  t.equal(followUpPath(b('HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Length: 19\r\n\r\n404 page not found\n')), undefined, 'not when a Server header names the product')
  t.equal(followUpPath(reply('', 'hello')), undefined)
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nLocation: /classic/graph\r\nContent-Length: 0\r\n\r\n')), '/api/v1/status/buildinfo')
  // Debian 12's prometheus 2.42.0 at /api/v1/status/buildinfo.
  t.same(parseVersionDocument(reply('Content-Type: application/json\r\n', '{"status":"success","data":{"version":"2.42.0+ds","revision":"2.42.0+ds-5+deb12u1","branch":"debian/sid","buildUser":"team+pkg-go@tracker.debian.org","buildDate":"20260604-00:58:54","goVersion":"go1.19.8"}}')),
    { service: 'http', product: 'Prometheus', version: '2.42.0', distro: 'deb12u1', extraInfo: 'build 2.42.0+ds-5+deb12u1; go 1.19.8' })
  t.same(parseVersionDocument(reply('Content-Type: application/json\r\n', '{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}')),
    { service: 'http', product: 'etcd', version: '3.4.23', extraInfo: 'cluster version 3.4.0' })
  t.match(parseVersionDocument(reply('', '{"Platform":{"Name":"Docker Engine - Community"},"Version":"24.0.7","ApiVersion":"1.43","Os":"linux"}')),
    { product: 'Docker', version: '24.0.7', extraInfo: 'API 1.43; os linux' })
  t.match(parseVersionDocument(reply('', '{"major":"1","minor":"28","gitVersion":"v1.28.2","platform":"linux/amd64"}')), { product: 'Kubernetes', version: '1.28.2' })
  t.equal(parseVersionDocument(reply('', '{"version":"1"}')), null)
})

test('documented root documents: Elasticsearch, OpenSearch, CouchDB name product and version', async (t) => {
  t.same(parse(reply('Content-Type: application/json\r\n', fixture('elasticsearch-8.12.1-root.json'))),
    { service: 'http', product: 'Elasticsearch', version: '8.12.1', extraInfo: 'cluster my_test_cluster; Lucene 9.9.2; flavor default; no authentication required' })
  t.match(parse(documented('elasticsearch-7.9.3-root.http')), { product: 'Elasticsearch', version: '7.9.3', extraInfo: /^cluster es-cluster; Lucene 8\.6\.2;/ })
  t.same(parse(documented('elasticsearch-7.9.3-unauthorized.http')), { service: 'http', product: 'Elasticsearch', extraInfo: 'authentication required' })
  t.match(parse(reply('', fixture('opensearch-2.6.0-root.json'))), { product: 'OpenSearch', version: '2.6.0', extraInfo: /^cluster opensearch-cluster; Lucene 9\.5\.0/ })
  t.match(parse(documented('couchdb-root.http')), { product: 'CouchDB', version: '1.3.1' }, 'the welcome document gives the version the Server header leaves out')
  t.match(parse(reply('Content-Type: application/json\r\n', '{"couchdb":"Welcome","version":"3.3.3"}')), { product: 'CouchDB', version: '3.3.3' }, 'without a Server header too')
  t.match(parse(reply('Server: nginx/1.22.1\r\n', '{"couchdb":"Welcome","version":"3.3.3"}')), { product: 'nginx', version: '1.22.1' }, 'a proxy that names itself is not renamed')
  t.match(parse(reply('', '{"couchdb":"Welcome"}')), { product: undefined })
})

test('Grafana and Consul: where / leads and what the follow-up document names', async (t) => {
  // Grafana sends no Server header and redirects `/` to its login page; Consul redirects `/` to its UI.
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nLocation: /login\r\nContent-Length: 29\r\n\r\n<a href="/login">Found</a>.\n\n')), '/api/health')
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nServer: nginx\r\nLocation: /login\r\nContent-Length: 0\r\n\r\n')), undefined, 'not behind a server that names itself')
  t.equal(followUpPath(b('HTTP/1.1 301 Moved Permanently\r\nLocation: /ui/\r\nContent-Length: 0\r\n\r\n')), '/v1/agent/self')
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nLocation: /login?next=%2F\r\nContent-Length: 0\r\n\r\n')), undefined, 'only the exact lead')
  const uiOff = reply('Content-Type: text/plain; charset=utf-8\r\n', fixture('consul-root-ui-disabled.txt'))
  t.same(parse(uiOff), { service: 'http', product: 'Consul', extraInfo: 'status 200' })
  t.equal(followUpPath(uiOff), '/v1/agent/self', 'the page names Consul but not its version')

  t.same(parseVersionDocument(documented('grafana-api-health.http')),
    { service: 'http', product: 'Grafana', version: '5.1.3', extraInfo: 'commit 087143285; database ok' })
  t.equal(parseVersionDocument(reply('', '{"database":"ok"}')), null, 'a health document with its version hidden names nothing')
  t.same(parseVersionDocument(reply('Content-Type: application/json\r\n', fixture('consul-agent-self.json'))),
    { service: 'http', product: 'Consul', version: '1.0.0', extraInfo: 'datacenter dc1; server; revision deadbeef; agent API without a token' })
  t.equal(parseVersionDocument(b('HTTP/1.1 403 Forbidden\r\nContent-Length: 17\r\n\r\nPermission denied')), null, 'an ACL refusal names nothing')
})

test('Traefik: its API entry point\'s redirect to /dashboard/ leads to /api/version, which names it', async (t) => {
  // Reconstructed from Traefik's and Go's source (see the fixture's source note): a 302 to /dashboard/, no Server header.
  const redirect = documented('traefik-root-redirect.http')
  t.same(parse(redirect), { service: 'http', extraInfo: 'status 302' }, '/ alone names nothing')
  t.equal(followUpPath(redirect), '/api/version')
  t.equal(followUpPath(b('HTTP/1.1 301 Moved Permanently\r\nLocation: /dashboard/\r\nContent-Length: 0\r\n\r\n')), '/api/version')
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nServer: nginx/1.22.1\r\nLocation: /dashboard/\r\nContent-Length: 0\r\n\r\n')), undefined,
    'not behind a server that names itself')
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nLocation: /dashboard\r\nContent-Length: 0\r\n\r\n')), undefined, 'only the exact lead')
  t.equal(followUpPath(b('HTTP/1.1 302 Found\r\nLocation: /prefix/dashboard/\r\nContent-Length: 0\r\n\r\n')), undefined, 'only the exact lead')
  t.equal(followUpPath(b('HTTP/1.1 200 OK\r\nLocation: /dashboard/\r\nContent-Length: 0\r\n\r\n')), undefined, 'only a redirect')

  t.same(parseVersionDocument(reply('Content-Type: application/json; charset=UTF-8\r\n', fixture('traefik-api-version.json'))),
    { service: 'http', product: 'Traefik', version: '3.4.0', extraInfo: 'codename montdor' })
  t.same(parseVersionDocument(reply('', '{"Version":"v2.10.4","Codename":"saintmarcelin","startDate":"2023-08-01T10:00:00Z"}')),
    { service: 'http', product: 'Traefik', version: '2.10.4', extraInfo: 'codename saintmarcelin' }, 'a leading v is dropped')
  t.same(parseVersionDocument(reply('', '{"Version":"dev","Codename":"cheddar","startDate":"2023-08-01T10:00:00Z"}')),
    { service: 'http', product: 'Traefik', extraInfo: 'codename cheddar; build dev' }, 'a source build names no release')
  t.equal(parseVersionDocument(reply('', '{"Version":"3.4.0","Codename":"montdor"}')), null, 'without startDate it is not Traefik\'s document')
  t.equal(parseVersionDocument(reply('', '{"Version":"3.4.0","startDate":"2025-03-28T14:58:25Z"}')), null, 'nor without Codename')
})

test('a refusal names Kubernetes only as the API server\'s own Status object', async (t) => {
  const refusal = (status: string, body: string, headers = ''): Buffer =>
    b(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n${headers}Content-Length: ${body.length}\r\n\r\n${body}`)
  const status401 = '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}'
  t.match(parse(refusal('401 Unauthorized', status401)), { product: 'Kubernetes', extraInfo: 'Unauthorized; status 401' })
  t.equal(followUpPath(refusal('401 Unauthorized', status401)), '/version')
  t.notOk(parse(refusal('401 Unauthorized', status401))?.version, 'a refusal shows no version')
  t.equal(parse(refusal('403 Forbidden', status401))?.product, undefined, 'the code in the body must be the status sent')
  t.equal(parse(refusal('403 Forbidden', '{"message":"forbidden"}'))?.product, undefined, 'any other JSON refusal names nothing')
  t.equal(followUpPath(refusal('403 Forbidden', '{"message":"forbidden"}')), undefined)
  t.equal(parse(refusal('401 Unauthorized', status401, 'Server: nginx\r\n'))?.product, 'nginx', 'a Server header speaks first')
})
