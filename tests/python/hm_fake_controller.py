"""A scripted OpenFlow 1.3 controller for test_harmless_proxy.py, run in
the server's namespace:

    python hm_fake_controller.py PORT MESSAGES_FILE

Listens on 127.0.0.1:PORT, takes one switch connection, sends HELLO and
FEATURES_REQUEST, then the messages of MESSAGES_FILE (one hex-encoded
OpenFlow message per line) and prints "installed" when the reply to the
last one (a barrier) arrives, or "error HEX" for every OFPT_ERROR. Answers
echo requests; runs until killed."""

import socket
import struct
import sys

HELLO = struct.pack("!BBHI", 4, 0, 8, 1)
FEATURES_REQUEST = struct.pack("!BBHI", 4, 5, 8, 2)


def main():
    port, path = int(sys.argv[1]), sys.argv[2]
    msgs = [bytes.fromhex(line.strip()) for line in open(path)
            if line.strip()]
    last_xid = struct.unpack_from("!I", msgs[-1], 4)[0]
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(1)
    print("listening", flush=True)
    conn, _ = srv.accept()
    conn.sendall(HELLO + FEATURES_REQUEST)
    buf, sent = b"", False
    while True:
        data = conn.recv(65536)
        if not data:
            print("closed", flush=True)
            return
        buf += data
        while len(buf) >= 8 and len(buf) >= struct.unpack_from("!H", buf,
                                                               2)[0]:
            n = struct.unpack_from("!H", buf, 2)[0]
            msg, buf = buf[:n], buf[n:]
            ty, xid = msg[1], struct.unpack_from("!I", msg, 4)[0]
            if ty == 2:                                   # echo request
                conn.sendall(bytes([4, 3]) + msg[2:])
            elif ty == 6 and not sent:                    # features reply
                conn.sendall(b"".join(msgs))
                sent = True
            elif ty == 1:
                print("error", msg.hex(), flush=True)
            elif ty == 21 and xid == last_xid:            # barrier reply
                print("installed", flush=True)


if __name__ == "__main__":
    main()
