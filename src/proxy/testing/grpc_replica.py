#!/usr/bin/python3
"""gRPC ends for the proxy tests, on grpcio (Debian's python3-grpcio).

  grpc_replica.py serve NAME...      one gRPC server per NAME on 127.0.0.1,
                                     each answering every unary call with
                                     "NAME <migserve-service header>"; prints
                                     "NAME PORT" per server, then "ready",
                                     and serves until stdin closes.
  grpc_replica.py call PORT SERVICE  one call through 127.0.0.1:PORT with
                                     the header (SERVICE "-": none); prints
                                     "OK <reply>" or "<STATUS> <details>".
"""
import sys
from concurrent import futures

import grpc

METHOD = "/inference.GRPCInferenceService/ModelInfer"


class Echo(grpc.GenericRpcHandler):
    """Answers every unary call with its name and the header it received."""

    def __init__(self, name):
        self.name = name

    def answer(self, request, context):
        header = dict(context.invocation_metadata()).get("migserve-service")
        return f"{self.name} {header}".encode()

    def service(self, handler_call_details):
        return grpc.unary_unary_rpc_method_handler(self.answer)


def serve(names):
    servers = []
    for name in names:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        server.add_generic_rpc_handlers((Echo(name),))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append(server)
        print(name, port)
    print("ready", flush=True)
    sys.stdin.read()
    for server in servers:
        server.stop(0)


def call(port, service):
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        metadata = None if service == "-" else [("migserve-service", service)]
        try:
            reply = channel.unary_unary(METHOD)(b"{}", metadata=metadata,
                                                timeout=10)
            print("OK", reply.decode())
        except grpc.RpcError as e:
            print(e.code().name, e.details())


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        serve(sys.argv[2:])
    elif len(sys.argv) == 4 and sys.argv[1] == "call":
        call(int(sys.argv[2]), sys.argv[3])
    else:
        sys.exit(__doc__)
