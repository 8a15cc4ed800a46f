"""The TPC-H-like kit's 22 queries, written for PostgreSQL by pglab from the TPC-H
specification (revision 3.0.1, clause 2.4), with its substitution parameters drawn as clause
2.4.x.3 says from a seeded generator: the same seed gives the same 22 statements (a run is
repeatable), another seed other values. Q15's view is a CTE (one statement per query).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date

QUERIES = tuple(range(1, 23))
REGIONS = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
# the 25 nations and their regions (clause 4.2.3)
NATIONS = (
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
)
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
TYPE_1 = ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
TYPE_2 = ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
TYPE_3 = ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")
CONTAINER_1 = ("SM", "LG", "MED", "JUMBO", "WRAP")
CONTAINER_2 = ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")
SHIPMODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
COLORS = [
    "almond",
    "antique",
    "aquamarine",
    "azure",
    "beige",
    "bisque",
    "black",
    "blanched",
    "blue",
    "blush",
    "brown",
    "burlywood",
    "burnished",
    "chartreuse",
    "chiffon",
    "chocolate",
    "coral",
    "cornflower",
    "cornsilk",
    "cream",
    "cyan",
    "dark",
    "deep",
    "dim",
    "dodger",
    "drab",
    "firebrick",
    "floral",
    "forest",
    "frosted",
    "gainsboro",
    "ghost",
    "goldenrod",
    "green",
    "grey",
    "honeydew",
    "hot",
    "indian",
    "ivory",
    "khaki",
    "lace",
    "lavender",
    "lawn",
    "lemon",
    "light",
    "lime",
    "linen",
    "magenta",
    "maroon",
    "medium",
    "metallic",
    "midnight",
    "mint",
    "misty",
    "moccasin",
    "navajo",
    "navy",
    "olive",
    "orange",
    "orchid",
    "pale",
    "papaya",
    "peach",
    "peru",
    "pink",
    "plum",
    "powder",
    "puff",
    "purple",
    "red",
    "rose",
    "rosy",
    "royal",
    "saddle",
    "salmon",
    "sandy",
    "seashell",
    "sienna",
    "sky",
    "slate",
    "smoke",
    "snow",
    "spring",
    "steel",
    "tan",
    "thistle",
    "tomato",
    "turquoise",
    "violet",
    "wheat",
    "white",
    "yellow",
]


def _month(r: random.Random, first: tuple[int, int], last: tuple[int, int]) -> str:
    """The first day of a month drawn between ``first`` and ``last`` (year, month)."""
    n = (last[0] - first[0]) * 12 + last[1] - first[1]
    k = first[1] - 1 + r.randint(0, n)
    return date(first[0] + k // 12, k % 12 + 1, 1).isoformat()


def _year(r: random.Random) -> str:
    return date(r.randint(1993, 1997), 1, 1).isoformat()


def _brand(r: random.Random) -> str:
    return f"Brand#{r.randint(1, 5)}{r.randint(1, 5)}"


def _nation(r: random.Random) -> str:
    return r.choice(NATIONS)[0]


def q1(r: random.Random) -> str:
    return f"""SELECT l_returnflag, l_linestatus, sum(l_quantity) AS sum_qty,
  sum(l_extendedprice) AS sum_base_price,
  sum(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
  sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
  avg(l_quantity) AS avg_qty, avg(l_extendedprice) AS avg_price, avg(l_discount) AS avg_disc,
  count(*) AS count_order
FROM lineitem
WHERE l_shipdate <= date '1998-12-01' - interval '{r.randint(60, 120)} days'
GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus"""


def q2(r: random.Random) -> str:
    size, kind, region = r.randint(1, 50), r.choice(TYPE_3), r.choice(REGIONS)
    return f"""SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
FROM part, supplier, partsupp, nation, region
WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = {size}
  AND p_type LIKE '%{kind}' AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
  AND r_name = '{region}'
  AND ps_supplycost = (
    SELECT min(ps_supplycost) FROM partsupp, supplier, nation, region
    WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_nationkey = n_nationkey
      AND n_regionkey = r_regionkey AND r_name = '{region}')
ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100"""


def q3(r: random.Random) -> str:
    segment, day = r.choice(SEGMENTS), date(1995, 3, r.randint(1, 31)).isoformat()
    return f"""SELECT l_orderkey, sum(l_extendedprice * (1 - l_discount)) AS revenue,
  o_orderdate, o_shippriority
FROM customer, orders, lineitem
WHERE c_mktsegment = '{segment}' AND c_custkey = o_custkey AND l_orderkey = o_orderkey
  AND o_orderdate < date '{day}' AND l_shipdate > date '{day}'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate LIMIT 10"""


def q4(r: random.Random) -> str:
    day = _month(r, (1993, 1), (1997, 10))
    return f"""SELECT o_orderpriority, count(*) AS order_count
FROM orders
WHERE o_orderdate >= date '{day}' AND o_orderdate < date '{day}' + interval '3 months'
  AND EXISTS (SELECT 1 FROM lineitem
              WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate)
GROUP BY o_orderpriority ORDER BY o_orderpriority"""


def q5(r: random.Random) -> str:
    region, day = r.choice(REGIONS), _year(r)
    return f"""SELECT n_name, sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey
  AND r_name = '{region}' AND o_orderdate >= date '{day}'
  AND o_orderdate < date '{day}' + interval '1 year'
GROUP BY n_name ORDER BY revenue DESC"""


def q6(r: random.Random) -> str:
    day, discount, quantity = _year(r), r.randint(2, 9) / 100, r.randint(24, 25)
    return f"""SELECT sum(l_extendedprice * l_discount) AS revenue
FROM lineitem
WHERE l_shipdate >= date '{day}' AND l_shipdate < date '{day}' + interval '1 year'
  AND l_discount BETWEEN {discount} - 0.01 AND {discount} + 0.01 AND l_quantity < {quantity}"""


def q7(r: random.Random) -> str:
    one, two = (n for n, _ in r.sample(NATIONS, 2))
    return f"""SELECT supp_nation, cust_nation, l_year, sum(volume) AS revenue
FROM (SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation,
        extract(year FROM l_shipdate) AS l_year,
        l_extendedprice * (1 - l_discount) AS volume
      FROM supplier, lineitem, orders, customer, nation n1, nation n2
      WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey
        AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey
        AND ((n1.n_name = '{one}' AND n2.n_name = '{two}')
          OR (n1.n_name = '{two}' AND n2.n_name = '{one}'))
        AND l_shipdate BETWEEN date '1995-01-01' AND date '1996-12-31') AS shipping
GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year"""


def q8(r: random.Random) -> str:
    nation, region = r.choice(NATIONS)
    kind = f"{r.choice(TYPE_1)} {r.choice(TYPE_2)} {r.choice(TYPE_3)}"
    return f"""SELECT o_year,
  sum(CASE WHEN nation = '{nation}' THEN volume ELSE 0 END) / sum(volume) AS mkt_share
FROM (SELECT extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation
      FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region
      WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey
        AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey
        AND n1.n_regionkey = r_regionkey AND r_name = '{REGIONS[region]}'
        AND s_nationkey = n2.n_nationkey
        AND o_orderdate BETWEEN date '1995-01-01' AND date '1996-12-31'
        AND p_type = '{kind}') AS all_nations
GROUP BY o_year ORDER BY o_year"""


def q9(r: random.Random) -> str:
    return f"""SELECT nation, o_year, sum(amount) AS sum_profit
FROM (SELECT n_name AS nation, extract(year FROM o_orderdate) AS o_year,
        l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount
      FROM part, supplier, lineitem, partsupp, orders, nation
      WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey
        AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey
        AND p_name LIKE '%{r.choice(COLORS)}%') AS profit
GROUP BY nation, o_year ORDER BY nation, o_year DESC"""


def q10(r: random.Random) -> str:
    day = _month(r, (1993, 2), (1995, 1))
    return f"""SELECT c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) AS revenue,
  c_acctbal, n_name, c_address, c_phone, c_comment
FROM customer, orders, lineitem, nation
WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate >= date '{day}'
  AND o_orderdate < date '{day}' + interval '3 months' AND l_returnflag = 'R'
  AND c_nationkey = n_nationkey
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC LIMIT 20"""


def q11(r: random.Random, scale: float) -> str:
    nation, fraction = _nation(r), 0.0001 / scale
    return f"""SELECT ps_partkey, sum(ps_supplycost * ps_availqty) AS value
FROM partsupp, supplier, nation
WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '{nation}'
GROUP BY ps_partkey
HAVING sum(ps_supplycost * ps_availqty) > (
  SELECT sum(ps_supplycost * ps_availqty) * {fraction:.10f}
  FROM partsupp, supplier, nation
  WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = '{nation}')
ORDER BY value DESC"""


def q12(r: random.Random) -> str:
    one, two = r.sample(SHIPMODES, 2)
    day = _year(r)
    return f"""SELECT l_shipmode,
  sum(CASE WHEN o_orderpriority IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END) AS high_line_count,
  sum(CASE WHEN o_orderpriority NOT IN ('1-URGENT', '2-HIGH') THEN 1 ELSE 0 END)
    AS low_line_count
FROM orders, lineitem
WHERE o_orderkey = l_orderkey AND l_shipmode IN ('{one}', '{two}')
  AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate
  AND l_receiptdate >= date '{day}' AND l_receiptdate < date '{day}' + interval '1 year'
GROUP BY l_shipmode ORDER BY l_shipmode"""


def q13(r: random.Random) -> str:
    one = r.choice(("special", "pending", "unusual", "express"))
    two = r.choice(("packages", "requests", "accounts", "deposits"))
    return f"""SELECT c_count, count(*) AS custdist
FROM (SELECT c_custkey, count(o_orderkey) AS c_count
      FROM customer LEFT OUTER JOIN orders
        ON c_custkey = o_custkey AND o_comment NOT LIKE '%{one}%{two}%'
      GROUP BY c_custkey) AS c_orders
GROUP BY c_count ORDER BY custdist DESC, c_count DESC"""


def q14(r: random.Random) -> str:
    day = _month(r, (1993, 1), (1997, 12))
    return f"""SELECT 100.00 * sum(CASE WHEN p_type LIKE 'PROMO%'
    THEN l_extendedprice * (1 - l_discount) ELSE 0 END)
  / sum(l_extendedprice * (1 - l_discount)) AS promo_revenue
FROM lineitem, part
WHERE l_partkey = p_partkey AND l_shipdate >= date '{day}'
  AND l_shipdate < date '{day}' + interval '1 month'"""


def q15(r: random.Random) -> str:
    day = _month(r, (1993, 1), (1997, 10))
    return f"""WITH revenue AS (
  SELECT l_suppkey AS supplier_no, sum(l_extendedprice * (1 - l_discount)) AS total_revenue
  FROM lineitem
  WHERE l_shipdate >= date '{day}' AND l_shipdate < date '{day}' + interval '3 months'
  GROUP BY l_suppkey)
SELECT s_suppkey, s_name, s_address, s_phone, total_revenue
FROM supplier, revenue
WHERE s_suppkey = supplier_no AND total_revenue = (SELECT max(total_revenue) FROM revenue)
ORDER BY s_suppkey"""


def q16(r: random.Random) -> str:
    brand, kind = _brand(r), f"{r.choice(TYPE_1)} {r.choice(TYPE_2)}"
    sizes = ", ".join(str(s) for s in r.sample(range(1, 51), 8))
    return f"""SELECT p_brand, p_type, p_size, count(DISTINCT ps_suppkey) AS supplier_cnt
FROM partsupp, part
WHERE p_partkey = ps_partkey AND p_brand <> '{brand}' AND p_type NOT LIKE '{kind}%'
  AND p_size IN ({sizes})
  AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier
                         WHERE s_comment LIKE '%Customer%Complaints%')
GROUP BY p_brand, p_type, p_size
ORDER BY supplier_cnt DESC, p_brand, p_type, p_size"""


def q17(r: random.Random) -> str:
    brand, container = _brand(r), f"{r.choice(CONTAINER_1)} {r.choice(CONTAINER_2)}"
    return f"""SELECT sum(l_extendedprice) / 7.0 AS avg_yearly
FROM lineitem, part
WHERE p_partkey = l_partkey AND p_brand = '{brand}' AND p_container = '{container}'
  AND l_quantity < (SELECT 0.2 * avg(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)"""


def q18(r: random.Random) -> str:
    return f"""SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
FROM customer, orders, lineitem
WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey
                     HAVING sum(l_quantity) > {r.randint(312, 315)})
  AND c_custkey = o_custkey AND o_orderkey = l_orderkey
GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
ORDER BY o_totalprice DESC, o_orderdate LIMIT 100"""


def q19(r: random.Random) -> str:
    q = (r.randint(1, 10), r.randint(10, 20), r.randint(20, 30))
    b = (_brand(r), _brand(r), _brand(r))
    common = "AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON'"
    return f"""SELECT sum(l_extendedprice * (1 - l_discount)) AS revenue
FROM lineitem, part
WHERE (p_partkey = l_partkey AND p_brand = '{b[0]}'
    AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
    AND l_quantity >= {q[0]} AND l_quantity <= {q[0]} + 10 AND p_size BETWEEN 1 AND 5 {common})
  OR (p_partkey = l_partkey AND p_brand = '{b[1]}'
    AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
    AND l_quantity >= {q[1]} AND l_quantity <= {q[1]} + 10 AND p_size BETWEEN 1 AND 10 {common})
  OR (p_partkey = l_partkey AND p_brand = '{b[2]}'
    AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
    AND l_quantity >= {q[2]} AND l_quantity <= {q[2]} + 10 AND p_size BETWEEN 1 AND 15 {common})"""


def q20(r: random.Random) -> str:
    color, day, nation = r.choice(COLORS), _year(r), _nation(r)
    return f"""SELECT s_name, s_address
FROM supplier, nation
WHERE s_suppkey IN (
    SELECT ps_suppkey FROM partsupp
    WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE '{color}%')
      AND ps_availqty > (
        SELECT 0.5 * sum(l_quantity) FROM lineitem
        WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey
          AND l_shipdate >= date '{day}' AND l_shipdate < date '{day}' + interval '1 year'))
  AND s_nationkey = n_nationkey AND n_name = '{nation}'
ORDER BY s_name"""


def q21(r: random.Random) -> str:
    return f"""SELECT s_name, count(*) AS numwait
FROM supplier, lineitem l1, orders, nation
WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F'
  AND l1.l_receiptdate > l1.l_commitdate
  AND EXISTS (SELECT 1 FROM lineitem l2
              WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey)
  AND NOT EXISTS (SELECT 1 FROM lineitem l3
                  WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey
                    AND l3.l_receiptdate > l3.l_commitdate)
  AND s_nationkey = n_nationkey AND n_name = '{_nation(r)}'
GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100"""


def q22(r: random.Random) -> str:
    codes = ", ".join(f"'{c}'" for c in r.sample(range(10, 35), 7))
    return f"""SELECT cntrycode, count(*) AS numcust, sum(c_acctbal) AS totacctbal
FROM (SELECT substring(c_phone FROM 1 FOR 2) AS cntrycode, c_acctbal
      FROM customer
      WHERE substring(c_phone FROM 1 FOR 2) IN ({codes})
        AND c_acctbal > (SELECT avg(c_acctbal) FROM customer
                         WHERE c_acctbal > 0.00
                           AND substring(c_phone FROM 1 FOR 2) IN ({codes}))
        AND NOT EXISTS (SELECT 1 FROM orders WHERE o_custkey = c_custkey)) AS custsale
GROUP BY cntrycode ORDER BY cntrycode"""


_MAKERS: dict[int, Callable[[random.Random], str]] = {
    1: q1,
    2: q2,
    3: q3,
    4: q4,
    5: q5,
    6: q6,
    7: q7,
    8: q8,
    9: q9,
    10: q10,
    12: q12,
    13: q13,
    14: q14,
    15: q15,
    16: q16,
    17: q17,
    18: q18,
    19: q19,
    20: q20,
    21: q21,
    22: q22,
}


def query(number: int, seed: int, scale: float) -> str:
    """Query ``number`` (1..22) with its substitution parameters drawn from ``seed`` (each
    query's own stream: which queries run does not change the others' values)."""
    if isinstance(number, bool) or number not in QUERIES:
        raise ValueError(f"no TPC-H query {number!r}: queries are 1 to 22")
    r = random.Random(f"tpch-{seed}-{number}")
    return q11(r, scale) if number == 11 else _MAKERS[number](r)


def unknown(numbers: object) -> list[object]:
    """The entries of a ``queries = [...]`` list that are no query number (1 to 22)."""
    items = numbers if isinstance(numbers, list | tuple) else [numbers]
    return [n for n in items if isinstance(n, bool) or n not in QUERIES]


# a query's mean seconds per unit of scale factor, for the plan's ETA: measured on the 2-CPU
# development machine (shared with other work) at SF 0.1 with default settings, 0.37 s over
# 2 power runs of the 22 queries (44 times), taken as linear in the scale factor. Measured by:
#   pglab run FILE   ([dataset] scale = 0.1, [workload] kit = "tpch", repeats = 2)
#   pglab export NAME --by query   (the mean of the seconds column, / 0.1)
QUERY_S_PER_SF = 3.7


def estimated_seconds(
    defines: tuple[tuple[str, str], ...],
    queries: tuple[int, ...],
    timeout: float | None,
    streams: int = 1,
) -> float:
    """A power run's (or ``streams`` streams') and its plans' run's seconds at the scale
    factor the phase is told (streams share 2 CPUs: each one's queries take that much more)."""
    per_query = QUERY_S_PER_SF * float(dict(defines).get("scale factor", "1"))
    if timeout is not None:
        per_query = min(per_query, timeout)
    run = per_query * len(queries or QUERIES) * max(1.0, streams / 2)
    return per_query * len(queries or QUERIES) + run + 2.0
