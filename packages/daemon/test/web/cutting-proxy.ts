import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on `[::1]:<port>` to the daemon on `127.0.0.1:<port>`, that a test can cut: every
 * connection through it is destroyed at once, as a dropped network would. The same port on the
 * other loopback address keeps the daemon's Host and Origin gates satisfied (`[::1]:<port>` is
 * one of its own names), so the browser sees one origin and the daemon is not told otherwise.
 */
export class CuttingProxy {
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;

  constructor(private readonly port: number) {}

  /** The browser's URL of the daemon, through the relay. */
  get url(): string {
    return `http://[::1]:${this.port}`;
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.port, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '::1', resolve);
    });
    this.server = server;
  }

  /** Drops every open connection; new ones are relayed as before. */
  cut(): number {
    const count = this.sockets.size;
    for (const socket of this.sockets) socket.destroy();
    return count;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) =>
      this.server === undefined ? resolve() : this.server.close(() => resolve()),
    );
  }
}
