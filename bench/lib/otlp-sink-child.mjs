// An OTLP/HTTP collector that takes everything and keeps nothing, for W2T/W4T: it reads each export's body and
// answers 200 (an empty protobuf message, which OTLP/HTTP allows). Counts requests and bytes, sent on request over IPC.
import { createServer } from 'node:http';

let requests = 0;
let bytes = 0;
const server = createServer((req, res) => {
  req.on('data', (c) => (bytes += c.length));
  req.on('end', () => {
    requests++;
    res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
  });
});
server.listen(0, '127.0.0.1', () => process.send({ ready: true, port: server.address().port }));
process.on('message', (m) => {
  if (m.cmd === 'stats') process.send({ stats: { requests, bytes } });
});
