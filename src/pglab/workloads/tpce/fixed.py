"""The TPC-E-like generator's constants, fixed tables and the small functions its rows use."""

from __future__ import annotations

import datetime as dt
import functools
import random
from decimal import Decimal

SEED = 2026  # the generator's seed: one dataset per scale


CUSTOMERS_PER_UNIT = 1000


ACCOUNTS_PER_CUSTOMER = 5


BROKERS_PER_UNIT = 10


COMPANIES_PER_UNIT = 500


SECURITIES_PER_UNIT = 685


TRADES_PER_ACCOUNT = 20  # the initial trade history's completed trades


TRADE_SLOTS = TRADES_PER_ACCOUNT + 1  # and one open order's id in each account's range


PORTFOLIO = 10  # symbols an account's initial trades are in (about 10 holdings per account)


DM_DAYS = 260


ZIP_CODES = 1000


COMPANY_ADDRESS = 10_000_000  # address ids: customers' = c_id; companies' and exchanges' after


EXCHANGE_ADDRESS = 20_000_000


END = dt.datetime(2025, 12, 31, 16, 0)  # the initial history's last trading moment


START = dt.datetime(2025, 1, 2, 9, 30)


STATUS = (
    ("CMPT", "Completed"),
    ("ACTV", "Active"),
    ("SBMT", "Submitted"),
    ("PNDG", "Pending"),
    ("CNCL", "Canceled"),
)


TRADE_TYPES = (
    ("TMB", "Market-Buy", False, True),
    ("TMS", "Market-Sell", True, True),
    ("TSL", "Stop-Loss", True, False),
    ("TLS", "Limit-Sell", True, False),
    ("TLB", "Limit-Buy", False, False),
)


EXCHANGES = (
    ("NYSE", "New York Stock Exchange", 930, 1600),
    ("NASDAQ", "NASDAQ", 930, 1600),
    ("AMEX", "American Stock Exchange", 930, 1600),
    ("PCX", "Pacific Exchange", 930, 1600),
)


SECTORS = (
    "Basic Materials",
    "Capital Goods",
    "Conglomerates",
    "Consumer Cyclical",
    "Consumer Non-Cyclical",
    "Energy",
    "Financial",
    "Healthcare",
    "Services",
    "Technology",
    "Transportation",
    "Utilities",
)


INDUSTRIES = 102


FIRST = (
    "James",
    "Mary",
    "John",
    "Patricia",
    "Robert",
    "Linda",
    "Michael",
    "Barbara",
    "David",
    "Susan",
    "Wei",
    "Ana",
    "Kenji",
    "Fatima",
    "Olga",
    "Pierre",
)


LAST = (
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Lopez",
    "Wilson",
    "Chen",
    "Kowalski",
    "Nakamura",
    "Haddad",
    "Ivanova",
    "Martin",
)


TAX_NATIONAL = 20  # taxrate rows: national ones, then state ones


TAX_STATE = 50


TIER_CHARGE = {1: Decimal("12.50"), 2: Decimal("10.00"), 3: Decimal("7.50")}


QTY_BOUNDS = ((1, 200), (201, 400), (401, 800), (801, 9_999_999))


def symbol(n: int) -> str:
    """Security ``n``'s symbol (``tpce_symbol`` in schema's SQL says the same)."""
    return f"SYMB{n:06d}"


def industry_id(i: int) -> str:
    """Industry ``i``'s id, two letters (``tpce_industry`` in procedures.sql says the same)."""
    return chr(65 + i // 26) + chr(65 + i % 26)


def tax_id(c_id: int) -> str:
    return f"{c_id:09d}TX"


def securities(scale: int) -> int:
    return scale * SECURITIES_PER_UNIT // CUSTOMERS_PER_UNIT


def companies(scale: int) -> int:
    return scale * COMPANIES_PER_UNIT // CUSTOMERS_PER_UNIT


def rng(*key: object) -> random.Random:
    return random.Random(":".join(str(k) for k in (SEED, *key)))


def money(x: float) -> Decimal:
    """``x`` in cents (rounded half to even, as ``Decimal.quantize``)."""
    return Decimal(round(x * 100)).scaleb(-2)


@functools.cache
def base_price(n: int) -> Decimal:
    """Security ``n``'s last price at the load (its last_trade and daily market's last close)."""
    return money(rng("price", n).uniform(20, 80))


@functools.cache
def commission(tier: int, tt: str, ex: int, qty: int) -> Decimal:
    """commission_rate's rate (%) for a tier, trade type, exchange (index) and quantity."""
    band = next(i for i, (lo, hi) in enumerate(QTY_BOUNDS) if lo <= qty <= hi)
    return (
        Decimal("0.40")
        - Decimal("0.05") * band
        - Decimal("0.10") * (tier - 1)
        + (Decimal("0.02") * ex + (Decimal("0.03") if tt in ("TLB", "TLS", "TSL") else 0))
    )


def exchange_of(n: int) -> int:
    """The index (in EXCHANGES) of security ``n``'s exchange."""
    return n % len(EXCHANGES)


Row = tuple[object, ...]


def fixed_tables() -> dict[str, list[Row]]:
    """The tables that do not grow with the customers, with the addresses of the exchanges."""
    zips: list[Row] = [
        (f"{10000 + i:05d}", f"Town {i}", f"Division {i % 50}") for i in range(ZIP_CODES)
    ]
    industries: list[Row] = [
        (industry_id(i), f"Industry {i}", f"{i % len(SECTORS):02d}") for i in range(INDUSTRIES)
    ]
    tax: list[Row] = [
        (f"US{i}", f"National tax {i}", money(0.05 + i * 0.01)) for i in range(TAX_NATIONAL)
    ]
    tax += [
        (f"S{i:03d}", f"State tax {i}", money(0.01 + (i % 10) * 0.005)) for i in range(TAX_STATE)
    ]
    rates: list[Row] = [
        (tier, tt, ex, lo, hi, commission(tier, tt, e, lo))
        for tier in (1, 2, 3)
        for tt, *_ in TRADE_TYPES
        for e, (ex, *_) in enumerate(EXCHANGES)
        for lo, hi in QTY_BOUNDS
    ]
    return {
        "status_type": list(STATUS),
        "trade_type": list(TRADE_TYPES),
        "zip_code": zips,
        "address": [
            (EXCHANGE_ADDRESS + i, f"{i + 1} Wall Street", None, zips[i][0], "USA")
            for i in range(len(EXCHANGES))
        ],
        "exchange": [
            (ex, name, 0, o, c, f"{name} ({ex})", EXCHANGE_ADDRESS + i)
            for i, (ex, name, o, c) in enumerate(EXCHANGES)
        ],
        "sector": [(f"{i:02d}", name) for i, name in enumerate(SECTORS)],
        "industry": industries,
        "taxrate": tax,
        "charge": [(tt, tier, TIER_CHARGE[tier]) for tt, *_ in TRADE_TYPES for tier in (1, 2, 3)],
        "commission_rate": rates,
    }
