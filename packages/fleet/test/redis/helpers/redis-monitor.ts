import { connect, type Socket } from 'node:net';

/** One command Redis executed, as MONITOR reports it: its arguments and the client's address. */
export interface MonitoredCommand {
  args: string[];
  source: string;
}

/**
 * Watches every command a Redis server executes, over its own raw connection. ioredis's
 * `monitor()` switches to monitor mode one microtask after MONITOR's `+OK`, so a report arriving
 * in the same packet hits an empty command queue ("Command queue state error") when other
 * clients are busy — here we read the reply stream ourselves.
 */
export class RedisMonitor {
  private readonly socket: Socket;
  private buffer = '';
  private confirmed = false;

  private constructor(
    socket: Socket,
    private readonly onCommand: (command: MonitoredCommand) => void,
  ) {
    this.socket = socket;
  }

  /** Resolves once Redis confirmed MONITOR; every later command is passed to `onCommand`. */
  static async start(url: string, onCommand: (command: MonitoredCommand) => void): Promise<RedisMonitor> {
    const { hostname, port } = new URL(url);
    const socket = connect({ host: hostname, port: Number(port || 6379) });
    const monitor = new RedisMonitor(socket, onCommand);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`MONITOR on ${url} not confirmed in 5 s`)), 5_000);
      socket.once('error', reject);
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        if (monitor.take(chunk)) {
          clearTimeout(timer);
          resolve();
        }
      });
      socket.write('MONITOR\r\n');
    });
    return monitor;
  }

  stop(): void {
    this.socket.destroy();
  }

  /** Consumes complete lines; true once MONITOR's `+OK` was read. */
  private take(chunk: string): boolean {
    this.buffer += chunk;
    let end = this.buffer.indexOf('\r\n');
    while (end >= 0) {
      const line = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      if (!this.confirmed) this.confirmed = line === '+OK';
      else this.report(line);
      end = this.buffer.indexOf('\r\n');
    }
    return this.confirmed;
  }

  /** `+1700000000.123456 [0 127.0.0.1:5000] "evalsha" "abc" …` */
  private report(line: string): void {
    const match = /^\+\S+ \[\S+ ([^\]]+)\] (.*)$/.exec(line);
    if (match === null) return;
    const args = [...match[2]!.matchAll(/"((?:\\.|[^"\\])*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
    this.onCommand({ args, source: match[1]! });
  }
}
