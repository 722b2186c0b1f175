"""What the golden case scripts (cases.py, programs.py) share."""


def csum(b):
    """The Internet checksum of b (RFC 1071)."""
    s = 0
    for i in range(0, len(b), 2):
        s += (b[i] << 8) + (b[i + 1] if i + 1 < len(b) else 0)
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
