"""The WebFetch URL policy (workspace spec §9.1), applied to the first URL and to every redirect target.

:func:`check_url` parses and checks a URL without network access; :func:`check_addresses`
checks the addresses a host resolved to. Both raise :class:`~holon_nb.tools._errors.ToolFailure`
carrying the spec's error kinds. Nothing here opens a connection.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

import httpx

from ...tools._envelope import ToolError
from ...tools._errors import ToolFailure

__all__ = [
    "HostRule",
    "METADATA_IPS",
    "Target",
    "blocked_reason",
    "check_addresses",
    "check_url",
    "embedded_ipv4",
    "parse_host_rules",
    "redact_url",
    "unwrap_ipv4",
]

#: Cloud metadata endpoints: refused even when allowlisted (workspace spec §9.1 rule 8).
METADATA_IPS = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),
        ipaddress.ip_address("100.100.100.200"),
        ipaddress.ip_address("fd00:ec2::254"),
    }
)

_PRIVATE_V4 = tuple(
    ipaddress.ip_network(n)
    for n in (
        # the spec's set (workspace spec §9.1 rule 9)
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "255.255.255.255/32",
        "192.0.2.0/24",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "0.0.0.0/8",
        # stricter than the spec: shared address space (carrier NAT), benchmarking, multicast, reserved
        "100.64.0.0/10",
        "198.18.0.0/15",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)
_PRIVATE_V6 = tuple(ipaddress.ip_network(n) for n in ("::1/128", "::/128", "fe80::/10", "fc00::/7", "ff00::/8"))
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # SIIT (RFC 2765); ipv4_mapped does not cover it
_DEFAULT_PORTS = {"http": 80, "https": 443}
_USERINFO_HINT = (
    "Do not put credentials in the URL; WebFetch sends no credentials. Fetch a public URL, "
    "or use ExecCommand with a tool that reads the credential from the environment."
)


def _deny(message: str, details: dict, hint: str, kind: str = "network_denied") -> ToolFailure:
    return ToolFailure(ToolError(kind=kind, message=message, details=details, recovery_hint=hint, retryable=False))


def redact_url(url: str) -> str:
    """``url`` with any userinfo replaced by ``[redacted]`` (workspace spec §9.1 rule 3a); other text unchanged."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority_end = len(rest)
    for stop in "/?#":
        idx = rest.find(stop)
        if idx != -1:
            authority_end = min(authority_end, idx)
    authority = rest[:authority_end]
    if "@" not in authority:
        return url
    return f"{scheme}://[redacted]@{authority.rsplit('@', 1)[1]}{rest[authority_end:]}"


@dataclass(frozen=True)
class HostRule:
    """One ``allowed_hosts``/``denied_hosts`` entry: a lower-case host (IPv6 compressed) and an optional port."""

    host: str
    port: int | None

    def matches(self, host: str, port: int) -> bool:
        """True when ``host`` (normalised as by :func:`_norm_host`) and ``port`` match this rule."""
        return self.host == host and (self.port is None or self.port == port)


def _norm_host(host: str) -> str:
    host = host.strip().lower().rstrip(".")
    try:
        return ipaddress.ip_address(host.strip("[]")).compressed
    except ValueError:
        return host


def parse_host_rules(rules: Iterable[str]) -> tuple[HostRule, ...]:
    """Parse host rules ``host``, ``host:port``, ``[ipv6]``, ``[ipv6]:port`` (exact, case-insensitive).

    Raises:
        ValueError: for a rule that is none of these (a bad port, an empty host).
    """
    out = []
    for raw in rules:
        rule = str(raw).strip()
        if not rule:
            continue
        port: str | None = None
        if rule.startswith("["):
            host, _, tail = rule[1:].partition("]")
            if tail:
                if not tail.startswith(":"):
                    raise ValueError(f"bad host rule {rule!r}: expected [ipv6] or [ipv6]:port")
                port = tail[1:]
        elif rule.count(":") == 1:
            host, port = rule.split(":")
        else:
            host = rule
            if ":" in host:
                try:
                    ipaddress.IPv6Address(host)
                except ValueError:
                    raise ValueError(
                        f"bad host rule {rule!r}: write an IPv6 address as [ipv6] or [ipv6]:port"
                    ) from None
        if not host or (port is not None and not (port.isdigit() and 0 < int(port) < 65536)):
            raise ValueError(f"bad host rule {rule!r}: expected host, host:port, [ipv6] or [ipv6]:port")
        out.append(HostRule(_norm_host(host), int(port) if port is not None else None))
    return tuple(out)


def unwrap_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The IPv4 address inside an IPv4-mapped, IPv4-compatible, IPv4-translated or NAT64 IPv6 address, else ``ip``
    (designed here). 6to4 and Teredo addresses are left as they are: see :func:`embedded_ipv4`."""
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        value = int(ip)
        if value >> 32 == 0 and value > 1:  # ::a.b.c.d (deprecated IPv4-compatible form), not :: or ::1
            return ipaddress.IPv4Address(value)
        if ip in _NAT64 or ip in _IPV4_TRANSLATED:
            return ipaddress.IPv4Address(value & 0xFFFFFFFF)
    return ip


def embedded_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address an IPv6 address carries (issue 25 item 6), in the order a router would use them.

    IPv4-mapped (``::ffff:a.b.c.d``), IPv4-compatible (``::a.b.c.d``), IPv4-translated
    (``::ffff:0:a.b.c.d``, ``::ffff:0:0:0/96``) and NAT64 (``64:ff9b::/96``) carry one; 6to4
    (``2002::/16``, :attr:`~ipaddress.IPv6Address.sixtofour`) one; Teredo (``2001::/32``,
    :attr:`~ipaddress.IPv6Address.teredo`) two, the server's and the (de-obfuscated) client's.
    An IPv4 address or a plain IPv6 address carries none.
    """
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    unwrapped = unwrap_ipv4(ip)
    if isinstance(unwrapped, ipaddress.IPv4Address):
        return [unwrapped]
    if ip.sixtofour is not None:
        return [ip.sixtofour]
    if ip.teredo is not None:
        return list(ip.teredo)
    return []


def _reason(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    if ip in METADATA_IPS:
        return "metadata"
    nets = _PRIVATE_V4 if isinstance(ip, ipaddress.IPv4Address) else _PRIVATE_V6
    return "private" if any(ip in net for net in nets) else None


def blocked_reason(address: str) -> str | None:
    """``"metadata"``, ``"private"`` or None for one resolved address (workspace spec §9.1 rules 8-9).

    An IPv6 address that carries an IPv4 address (:func:`embedded_ipv4`) is judged by that address too:
    ``2002:7f00:1::1`` (6to4 of 127.0.0.1) is private, ``2002:a9fe:a9fe::`` is the metadata address.
    """
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    reasons = [_reason(ip), *(_reason(v4) for v4 in embedded_ipv4(ip))]
    if "metadata" in reasons:
        return "metadata"
    return "private" if "private" in reasons else None


@dataclass(frozen=True)
class Target:
    """A URL that passed the pre-resolution checks.

    Attributes:
        url: The parsed URL.
        host: The host as matched by rules (lower case; IPv6 compressed, without brackets).
        port: The effective port.
        allowlisted: True when an ``allowed_hosts`` rule matched (private addresses are then allowed).
        literal_ip: True when the host is an IP literal (used as-is, no DNS).
    """

    url: httpx.URL
    host: str
    port: int
    allowlisted: bool
    literal_ip: bool


def check_url(
    url: str | httpx.URL, *, allowed: tuple[HostRule, ...], denied: tuple[HostRule, ...], redirect: bool = False
) -> Target:
    """Apply workspace spec §9.1 rules 2-6 (and 3a) to ``url``.

    Args:
        url: The initial URL text, or a joined redirect target.
        allowed, denied: Parsed host rules.
        redirect: True for a redirect target: parse and userinfo failures become
            ``invalid_redirect_location`` instead of ``invalid_url``.

    Returns:
        The :class:`Target`.

    Raises:
        ToolFailure: ``invalid_url`` / ``invalid_redirect_location`` / ``network_denied``.
    """
    bad_kind = "invalid_redirect_location" if redirect else "invalid_url"
    text = str(url)
    shown = redact_url(text)
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(text)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise _deny(
            f"not a valid URL: {shown[:200]} ({_redact_exc(exc, text)})",
            {"url": shown[:500]},
            "Pass an absolute http:// or https:// URL.",
            bad_kind,
        ) from None
    scheme = parsed.scheme.lower()
    if not scheme or (scheme in _DEFAULT_PORTS and not parsed.host):
        raise _deny(
            f"not an absolute URL: {shown[:200]}",
            {"url": shown[:500]},
            "Pass an absolute URL such as https://example.org/page.",
            bad_kind,
        )
    if scheme not in _DEFAULT_PORTS:
        raise _deny(
            f"scheme {scheme!r} is not allowed; WebFetch fetches http and https URLs only",
            {"url": shown[:500], "scheme": scheme},
            "Use an http:// or https:// URL; read local files with ExecCommand.",
        )
    if parsed.userinfo:
        raise _deny(
            f"URLs with credentials (userinfo) are refused: {shown[:200]}",
            {"url": shown[:500], "reason": "userinfo_not_allowed"},
            _USERINFO_HINT,
            bad_kind,
        )
    host = _norm_host(parsed.host)
    port = parsed.port or _DEFAULT_PORTS[scheme]
    if not host:
        raise _deny(f"URL has no host: {shown[:200]}", {"url": shown[:500]}, "Pass a URL with a host name.")
    for rule in denied:
        if rule.matches(host, port):
            raise _deny(
                f"host {host} is in denied_hosts",
                {"url": shown[:500], "host": host, "port": port},
                "This host is denied by the web policy (HolonNB.web_denied_hosts).",
            )
    allowlisted = any(rule.matches(host, port) for rule in allowed)
    if allowed and not allowlisted:
        raise _deny(
            f"host {_rule_text(HostRule(host, port))} is not in allowed_hosts",
            {"url": shown[:500], "host": host, "port": port, "allowed_hosts": [_rule_text(r) for r in allowed]},
            "Only allowlisted hosts may be fetched; add it to HolonNB.web_allowed_hosts if it is safe.",
        )
    try:
        ipaddress.ip_address(host)
        literal = True
    except ValueError:
        literal = False
    return Target(url=parsed, host=host, port=port, allowlisted=allowlisted, literal_ip=literal)


def _rule_text(rule: HostRule) -> str:
    host = f"[{rule.host}]" if ":" in rule.host else rule.host
    return host if rule.port is None else f"{host}:{rule.port}"


def _redact_exc(exc: Exception, text: str) -> str:
    message = str(exc)
    return message.replace(text, redact_url(text)) if "@" in text else message


def check_addresses(target: Target, addresses: list[str]) -> None:
    """Apply workspace spec §9.1 rules 8-9 to the resolved ``addresses`` of ``target``.

    Metadata addresses are refused even when allowlisted; private and local ones unless the host
    matched ``allowed_hosts``; a host with mixed public and private records is refused.

    Raises:
        ToolFailure: ``network_denied`` with ``details.blocked_ips``.
    """
    shown = redact_url(str(target.url))
    metadata = [a for a in addresses if blocked_reason(a) == "metadata"]
    if metadata:
        raise _deny(
            f"{target.host} resolves to a cloud metadata address ({', '.join(metadata)}); "
            "metadata endpoints are always refused",
            {"url": shown[:500], "host": target.host, "blocked_ips": metadata, "reason": "metadata_address"},
            "Cloud metadata endpoints cannot be fetched, even when allowlisted.",
        )
    if target.allowlisted:
        return
    private = [a for a in addresses if blocked_reason(a) == "private"]
    if private:
        mixed = len(private) < len(addresses)
        raise _deny(
            f"{target.host} resolves to a private or local address ({', '.join(private)})"
            + ("; a host with mixed public and private records is refused" if mixed else ""),
            {
                "url": shown[:500],
                "host": target.host,
                "blocked_ips": private,
                "reason": "mixed_records" if mixed else "private_address",
            },
            "Private and local addresses are refused; if this host is trusted, add it to "
            "HolonNB.web_allowed_hosts (host or host:port).",
        )
