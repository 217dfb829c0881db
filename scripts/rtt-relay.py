#!/usr/bin/env python3
"""A TCP relay on loopback that adds a round-trip time: every chunk read on one side is written to the other
`--delay-ms` later (one way; the round trip is twice that), in order, each direction on its own. TLS, HTTP/2 flow
control and handshakes all pay it, as they do on the way to APNs. For benchmarks (issue 29's RTT rows): only
127.0.0.1 is listened on and connected to.

Usage: rtt-relay.py --target PORT --delay-ms 25 [--listen PORT] [--port-file FILE]
"""
import argparse
import asyncio
import sys


async def pump(reader, writer, delay):
    """Copies reader to writer, each chunk `delay` seconds after it was read, keeping the order."""
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def feed():
        while True:
            data = await reader.read(65536)
            await queue.put((loop.time() + delay, data))
            if not data:
                return

    feeder = asyncio.create_task(feed())
    try:
        while True:
            due, data = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        feeder.cancel()
        try:
            writer.close()
        except (ConnectionError, OSError):
            pass


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", type=int, required=True, help="port on 127.0.0.1 to relay to")
    parser.add_argument("--delay-ms", type=float, required=True, help="one-way delay in milliseconds")
    parser.add_argument("--listen", type=int, default=0, help="port to listen on (0: a free one)")
    parser.add_argument("--port-file", help="write the bound port here once listening")
    args = parser.parse_args()
    delay = args.delay_ms / 1000

    async def handle(client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", args.target)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pump(client_reader, server_writer, delay), pump(server_reader, client_writer, delay))

    server = await asyncio.start_server(handle, "127.0.0.1", args.listen)
    port = server.sockets[0].getsockname()[1]
    if args.port_file:
        with open(args.port_file, "w") as f:
            f.write(f"{port}\n")
    print(f"rtt-relay: 127.0.0.1:{port} -> 127.0.0.1:{args.target}, {args.delay_ms} ms each way", file=sys.stderr)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
