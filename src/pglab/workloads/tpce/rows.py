"""The TPC-E-like kit's rows: a deterministic generator of pglab's own (TPC's EGen cannot be
used), seeded, at the specification's ratios per load unit of 1,000 customers (clause 2.6:
5 accounts a customer, 10 brokers, 500 companies and 685 securities per 1,000 customers),
with what is simplified said where it is made:

- fewer distinct texts (names from short lists, addresses and descriptions numbered, 1,000 zip
  codes rather than 14,741, news items of 1,000 characters rather than 100 KB LOBs);
- exactly 5 accounts per customer (the specification: 1 to 10, 5 on average), customers
  chosen uniformly by the transactions (no tiers of access frequency);
- a smaller initial trade history: 20 completed buy trades per account (the specification:
  about 3,456 per account over 300 initial trade days, sells among them), each one a holding,
  so that the holdings are their trades; one open order in ten accounts (half of them
  submitted to the market, half pending limit orders), so Trade-Result has work from the
  first second;
- 260 business days of daily market data rather than 1,305.

Pure functions: the loader (``load``) writes these rows with COPY. ``Unit`` is the unit's
rows table by table; every number depends only on the seed, the unit's number and the scale.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from pglab.workloads.tpce.fixed import (
    ACCOUNTS_PER_CUSTOMER,
    BROKERS_PER_UNIT,
    COMPANIES_PER_UNIT,
    COMPANY_ADDRESS,
    CUSTOMERS_PER_UNIT,
    DM_DAYS,
    END,
    EXCHANGES,
    FIRST,
    INDUSTRIES,
    LAST,
    PORTFOLIO,
    SECURITIES_PER_UNIT,
    START,
    TAX_NATIONAL,
    TAX_STATE,
    TIER_CHARGE,
    TRADE_SLOTS,
    TRADES_PER_ACCOUNT,
    ZIP_CODES,
    base_price,
    commission,
    companies,
    exchange_of,
    industry_id,
    money,
    rng,
    securities,
    symbol,
    tax_id,
)


@dataclass(frozen=True, slots=True)
class Trade:
    t_id: int
    ca_id: int
    symb: str
    tt: str
    status: str  # CMPT, or an open order's SBMT (sent to the market) or PNDG (a limit order)
    submitted: dt.datetime
    done: dt.datetime
    qty: int
    bid: Decimal
    price: Decimal
    cash: bool
    lifo: bool
    chrg: Decimal
    comm: Decimal

    @property
    def amount(self) -> Decimal:
        """The settlement's amount: what a buy costs the account, charge and commission in."""
        return -(self.qty * self.price) - self.chrg - self.comm


def weekdays(end: dt.date, count: int) -> list[dt.date]:
    """The ``count`` weekdays up to ``end``, oldest first."""
    out: list[dt.date] = []
    day = end
    while len(out) < count:
        if day.weekday() < 5:
            out.append(day)
        day -= dt.timedelta(days=1)
    return out[::-1]


@dataclass(frozen=True, slots=True)
class Unit:
    """Load unit ``number`` (from 1) of a dataset of ``scale`` customers."""

    number: int
    scale: int

    @property
    def first_customer(self) -> int:
        return (self.number - 1) * CUSTOMERS_PER_UNIT + 1

    def customer_ids(self) -> range:
        return range(self.first_customer, self.first_customer + CUSTOMERS_PER_UNIT)

    def tier(self, c_id: int) -> int:
        r = rng("tier", c_id).random()
        return 1 if r < 0.2 else 2 if r < 0.8 else 3

    def broker_of(self, ca_id: int) -> int:
        return (self.number - 1) * BROKERS_PER_UNIT + ca_id % BROKERS_PER_UNIT + 1

    def tables(self) -> Iterator[tuple[str, Iterator[tuple[object, ...]]]]:
        """Each table of the unit and its rows, in an order the loader copies them in."""
        trades = self.trades()
        yield "address", self.addresses()
        yield "customer", self.customers()
        yield "customer_taxrate", self.customer_taxrates()
        yield "broker", self.brokers(trades)
        yield "customer_account", self.accounts(trades)
        yield "account_permission", self.permissions()
        yield "company", self.companies()
        yield "company_competitor", self.competitors()
        yield "financial", self.financials()
        yield "news_item", self.news()
        yield "news_xref", self.news_xref()
        yield "security", self.securities()
        yield "daily_market", self.daily_market()
        yield "last_trade", self.last_trades()
        yield "watch_list", ((c, c) for c in self.customer_ids())
        yield "watch_item", self.watch_items()
        yield "trade", (self.trade_row(t) for t in trades)
        yield "trade_history", self.trade_history(trades)
        yield (
            "trade_request",
            (
                (t.t_id, t.tt, t.symb, t.qty, t.bid, self.broker_of(t.ca_id))
                for t in trades
                if t.status == "PNDG"
            ),
        )
        yield "tpce_submitted", ((t.t_id, t.submitted) for t in trades if t.status == "SBMT")
        yield "settlement", self.settlements(trades)
        yield "cash_transaction", self.cash_transactions(trades)
        yield "holding_summary", self.holding_summaries(trades)
        yield (
            "holding",
            (
                (t.t_id, t.ca_id, t.symb, t.done, t.price, t.qty)
                for t in trades
                if t.status == "CMPT"
            ),
        )
        yield "holding_history", ((t.t_id, t.t_id, 0, t.qty) for t in trades if t.status == "CMPT")

    # -- customers ---------------------------------------------------------------------------

    def addresses(self) -> Iterator[tuple[object, ...]]:
        for c in self.customer_ids():
            yield c, f"{c} Main Street", None, f"{10000 + c % ZIP_CODES:05d}", "USA"
        for co in self.company_ids():
            yield (
                COMPANY_ADDRESS + co,
                f"{co} Market Street",
                "Suite 100",
                f"{10000 + co % ZIP_CODES:05d}",
                "USA",
            )

    def customers(self) -> Iterator[tuple[object, ...]]:
        for c in self.customer_ids():
            r = rng("customer", c)
            born = dt.date(1940, 1, 1) + dt.timedelta(r.randrange(20000))
            yield (
                c,
                tax_id(c),
                "ACTV",
                r.choice(LAST),
                r.choice(FIRST),
                chr(65 + r.randrange(26)),
                r.choice("MF"),
                self.tier(c),
                born,
                c,
                "1",
                f"{r.randrange(200, 999)}",
                f"{r.randrange(10**6, 10**7)}",
                f"c{c}@example.com",
            )

    def customer_taxrates(self) -> Iterator[tuple[object, ...]]:
        for c in self.customer_ids():
            yield f"US{c % TAX_NATIONAL}", c
            yield f"S{c % TAX_STATE:03d}", c

    def account_ids(self, c_id: int) -> range:
        first = (c_id - 1) * ACCOUNTS_PER_CUSTOMER + 1
        return range(first, first + ACCOUNTS_PER_CUSTOMER)

    def accounts(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        """Each account's balance is what its cash trades settled (the consistency check's
        ``ca_bal = sum(ct_amt)``)."""
        balance: dict[int, Decimal] = {}
        for t in trades:
            if t.status == "CMPT" and t.cash:
                balance[t.ca_id] = balance.get(t.ca_id, Decimal(0)) + t.amount
        for c in self.customer_ids():
            for ca in self.account_ids(c):
                yield (
                    ca,
                    self.broker_of(ca),
                    c,
                    f"Account {ca}",
                    ca % 3,
                    balance.get(ca, Decimal("0.00")),
                )

    def permissions(self) -> Iterator[tuple[object, ...]]:
        for c in self.customer_ids():
            for ca in self.account_ids(c):
                r = rng("permission", ca)
                yield ca, "0000", tax_id(c), r.choice(LAST), r.choice(FIRST)
                for k in range(r.choice((0, 0, 1, 1, 2))):  # about 1.4 a account
                    yield ca, "0011", f"{ca:010d}P{k}", r.choice(LAST), r.choice(FIRST)

    def brokers(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        """A broker's trade count and commissions are its accounts' completed trades'."""
        first = (self.number - 1) * BROKERS_PER_UNIT + 1
        count = dict.fromkeys(range(first, first + BROKERS_PER_UNIT), 0)
        total = dict.fromkeys(count, Decimal(0))
        for t in trades:
            if t.status == "CMPT":
                count[self.broker_of(t.ca_id)] += 1
                total[self.broker_of(t.ca_id)] += t.comm
        for b in count:
            r = rng("broker", b)
            yield b, "ACTV", f"{r.choice(FIRST)} {r.choice(LAST)} {b}", count[b], total[b]

    def watch_items(self) -> Iterator[tuple[object, ...]]:
        n = securities(self.scale)
        for c in self.customer_ids():
            r = rng("watch", c)
            for s in sorted(r.sample(range(1, n + 1), min(n, r.randint(50, 150)))):
                yield c, symbol(s)

    # -- the market ----------------------------------------------------------------------------

    def company_ids(self) -> range:
        first = (self.number - 1) * COMPANIES_PER_UNIT + 1
        return range(first, first + COMPANIES_PER_UNIT)

    def security_ids(self) -> range:
        first = (self.number - 1) * SECURITIES_PER_UNIT + 1
        return range(first, first + SECURITIES_PER_UNIT)

    def industry_of(self, co: int) -> str:
        return industry_id(rng("industry", co).randrange(INDUSTRIES))

    def companies(self) -> Iterator[tuple[object, ...]]:
        for co in self.company_ids():
            r = rng("company", co)
            yield (
                co,
                "ACTV",
                f"Company {co}",
                self.industry_of(co),
                r.choice(("AAA", "AA", "A", "BBB", "BB", "B")),
                f"{r.choice(FIRST)} {r.choice(LAST)}",
                COMPANY_ADDRESS + co,
                f"Company {co}, a company of industry {self.industry_of(co)}",
                dt.date(1950, 1, 1) + dt.timedelta(r.randrange(25000)),
            )

    def competitors(self) -> Iterator[tuple[object, ...]]:
        n = companies(self.scale)
        for co in self.company_ids():
            r = rng("competitor", co)
            picked = sorted(x + (x >= co) for x in r.sample(range(1, n), 3))  # never co itself
            for other in picked:
                yield co, other, self.industry_of(co)

    def financials(self) -> Iterator[tuple[object, ...]]:
        for co in self.company_ids():
            r = rng("financial", co)
            for year in range(2021, 2026):
                for qtr in range(1, 5):
                    revenue = money(r.uniform(1e6, 1e9))
                    earn = money(float(revenue) * r.uniform(-0.1, 0.3))
                    out = r.randrange(10**6, 10**9)
                    yield (
                        co,
                        year,
                        qtr,
                        dt.date(year, 3 * qtr - 2, 1),
                        revenue,
                        earn,
                        money(float(earn) / out),
                        money(float(earn) / out * 0.98),
                        money(100 * float(earn) / float(revenue)),
                        money(r.uniform(0, 1e8)),
                        money(r.uniform(1e7, 1e10)),
                        money(r.uniform(1e6, 1e9)),
                        out,
                        int(out * 1.02),
                    )

    def news(self) -> Iterator[tuple[object, ...]]:
        for co in self.company_ids():
            for k in (1, 2):
                ni = (co - 1) * 2 + k
                text = f"News {ni} of company {co}. " * 40
                at = END - dt.timedelta(days=ni % 365)
                yield (
                    ni,
                    f"Headline {ni} of company {co}",
                    f"Summary of news {ni}",
                    text[:1000],
                    at,
                    "Wire",
                    "Reporter",
                )

    def news_xref(self) -> Iterator[tuple[object, ...]]:
        for co in self.company_ids():
            yield (co - 1) * 2 + 1, co
            yield (co - 1) * 2 + 2, co

    def closes(self, n: int) -> list[Decimal]:
        """Security ``n``'s DM_DAYS daily closes, a random walk ending at its base price."""
        r = rng("walk", n)
        price, out = float(base_price(n)), []
        for _ in range(DM_DAYS):
            out.append(money(price))
            price = max(1.0, price * (1 + r.gauss(0, 0.01)))
        return out[::-1]

    def securities(self) -> Iterator[tuple[object, ...]]:
        days = weekdays(END.date(), DM_DAYS)
        cos = len(self.company_ids())
        for n in self.security_ids():
            r = rng("security", n)
            closes = self.closes(n)
            hi = max(range(DM_DAYS), key=lambda i: closes[i])
            lo = min(range(DM_DAYS), key=lambda i: closes[i])
            co = self.company_ids()[(n - 1) % cos]
            yield (
                symbol(n),
                "COMMON",
                "ACTV",
                f"Security {n} of company {co}",
                EXCHANGES[exchange_of(n)][0],
                co,
                r.randrange(10**6, 10**9),
                dt.date(1990, 1, 1),
                dt.date(1990, 1, 2),
                money(r.uniform(5, 50)),
                closes[hi],
                days[hi],
                closes[lo],
                days[lo],
                money(r.uniform(0, 5)),
                money(r.uniform(0, 8)),
            )

    def daily_market(self) -> Iterator[tuple[object, ...]]:
        days = weekdays(END.date(), DM_DAYS)
        for n in self.security_ids():
            r = rng("volume", n)
            for day, close in zip(days, self.closes(n), strict=True):
                yield (
                    day,
                    symbol(n),
                    close,
                    money(float(close) * 1.02),
                    money(float(close) * 0.98),
                    r.randrange(10**4, 10**7),
                )

    def last_trades(self) -> Iterator[tuple[object, ...]]:
        for n in self.security_ids():
            price = base_price(n)
            yield symbol(n), END, price, price, 0

    # -- trades --------------------------------------------------------------------------------

    def trades(self) -> list[Trade]:
        """Each account's 20 completed buys in symbols of its portfolio, oldest first, and one
        account in ten an open order: submitted to the market, or a pending limit order."""
        n = securities(self.scale)
        span = (END - START).total_seconds()
        out: list[Trade] = []
        for c in self.customer_ids():
            tier = self.tier(c)
            for ca in self.account_ids(c):
                r = rng("trades", ca)
                portfolio = r.sample(range(1, n + 1), min(n, PORTFOLIO))
                times = sorted(r.uniform(0, span) for _ in range(TRADES_PER_ACCOUNT))
                first = (ca - 1) * TRADE_SLOTS + 1
                for k, at in enumerate(times):
                    out.append(self.trade(r, first + k, ca, tier, r.choice(portfolio), at, "CMPT"))
                if ca % 10 == 0:
                    status = "SBMT" if ca % 20 == 0 else "PNDG"
                    out.append(
                        self.trade(
                            r,
                            first + TRADES_PER_ACCOUNT,
                            ca,
                            tier,
                            r.randrange(1, n + 1),
                            span,
                            status,
                        )
                    )
        return out

    def trade(
        self, r: random.Random, t_id: int, ca: int, tier: int, s: int, at: float, status: str
    ) -> Trade:
        tt = "TLB" if status == "PNDG" or r.random() < 0.25 else "TMB"
        qty = 100 * r.randint(1, 8)
        price = money(float(base_price(s)) * r.uniform(0.9, 1.1))
        bid = price if tt == "TMB" else money(float(price) * 0.95)
        submitted = START + dt.timedelta(seconds=at)
        done = submitted + dt.timedelta(seconds=r.randint(1, 30))
        comm = money(float(qty * price * commission(tier, tt, exchange_of(s), qty)) / 100)
        return Trade(
            t_id,
            ca,
            symbol(s),
            tt,
            status,
            submitted,
            done,
            qty,
            bid,
            price,
            r.random() < 0.92,
            r.random() < 0.5,
            TIER_CHARGE[tier],
            comm if status == "CMPT" else Decimal("0.00"),
        )

    def trade_row(self, t: Trade) -> tuple[object, ...]:
        done = t.status == "CMPT"
        return (
            t.t_id,
            t.done if done else t.submitted,
            t.status,
            t.tt,
            t.cash,
            t.symb,
            t.qty,
            t.bid,
            t.ca_id,
            f"Account {t.ca_id}",
            t.price if done else None,
            t.chrg,
            t.comm,
            Decimal("0.00"),
            t.lifo,
        )

    def trade_history(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        """A limit order was pending, then submitted; every trade was submitted; a completed
        one completed."""
        for t in trades:
            if t.tt != "TMB":
                yield t.t_id, t.submitted - dt.timedelta(seconds=60), "PNDG"
            if t.status != "PNDG":
                yield t.t_id, t.submitted, "SBMT"
            if t.status == "CMPT":
                yield t.t_id, t.done, "CMPT"

    def settlements(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        for t in trades:
            if t.status == "CMPT":
                kind = "Cash Account" if t.cash else "Margin"
                yield t.t_id, kind, t.done.date() + dt.timedelta(days=2), t.amount

    def cash_transactions(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        for t in trades:
            if t.status == "CMPT" and t.cash:
                yield t.t_id, t.done, t.amount, f"{t.tt} {t.qty} shares of {t.symb.strip()}"

    def holding_summaries(self, trades: list[Trade]) -> Iterator[tuple[object, ...]]:
        held: dict[tuple[int, str], int] = {}
        for t in trades:
            if t.status == "CMPT":
                held[t.ca_id, t.symb] = held.get((t.ca_id, t.symb), 0) + t.qty
        for (ca, symb), qty in sorted(held.items()):
            yield ca, symb, qty


def units(scale: int) -> int:
    """The load units of ``scale`` customers (a multiple of 1,000)."""
    return scale // CUSTOMERS_PER_UNIT
