"""Every stored point keeps its key (issue 51): a phase's work has a type per kind since, and
``campaign/identity`` flattens it back into the one record a phase was stored as. The keys of
every example's points, and of campaigns that give each kind its keys (inherited pgbench
options beside an operation, sysbench's rate and seed, paced TPC-C, a TPC-H throughput run,
variants that switch an operation for a script), computed on da833da (before the change) and
held here, with a digest of each point's stored spec (its keys in their order).

Paths in a spec (a custom script's, a replay's workload file) are this checkout's: they are
written as ``ROOT/`` before hashing, so the digests do not depend on where the tests run
(``point_key`` itself is the same function of the spec with the checkout's paths)."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from pglab.campaign import parse as campaign
from pglab.planning.plan import expand_points

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

# campaigns of the tests' kind, beside the examples
DOCS = {
    "operation-beside-pgbench-options": """
name = "ops"
[workload]
script = "select-only"
clients = 4
protocol = "prepared"
max_tries = 3
random_seed = 7
[[phases]]
name = "warm"
measured = false
[[phases]]
name = "vac"
operation = "vacuum"
dirty = 0.2
[[phases]]
name = "idx"
operation = "create_index"
columns = ["bid", "abalance"]
method = "brin"
[matrix]
parallel = [0, 2]
""",
    "operation-switched-for-a-script": """
name = "switch"
[workload]
operation = "dump"
jobs = 2
compress = false
[variants.dump]
[variants.pgbench.workload]
script = "tpcb-like"
latency_log = "aggregate"
progress = false
""",
    "sysbench-rate-and-seed": """
name = "sb"
[dataset]
tables = 2
table_size = 1000
[workload]
generator = "sysbench"
test = "oltp_read_only"
clients = 2
rate = 100
random_seed = 3
duration = 5
""",
    "tpcc-paced": """
name = "paced"
[dataset]
scale = 2
[workload]
kit = "tpcc"
pacing = "spec"
think_time = 0.5
duration = 5
""",
    "ycsb-distribution": """
name = "ycsb"
[dataset]
scale = 1
fields = 4
[workload]
kit = "ycsb"
mode = "b"
distribution = "uniform"
clients = 2
[matrix]
rate = [100, 200]
""",
    "tpch-throughput": """
name = "tpch"
[dataset]
scale = 0.01
[workload]
kit = "tpch"
mode = "throughput"
clients = 2
queries = [6, 1, 14]
query_timeout = 30
random_seed = 5
""",
    "pgbench-every-option": """
name = "opts"
[workload]
scripts = [{builtin = "select-only", weight = 9}, {builtin = "simple-update"}]
clients = 4
threads = 2
transactions = 100
connect = true
vacuum = false
latency_limit = 50
failures_detailed = true
report_per_command = true
sampling_rate = 0.5
[[phases]]
name = "a"
times = 2
[[phases]]
name = "b"
rate = 300
""",
}


def _hashed(obj: object) -> str:
    text = json.dumps(obj, default=str).replace(str(ROOT), "ROOT")
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def keys_of(c: Any) -> list[str]:
    """Each point's key (of its spec with this checkout's paths as ``ROOT/``: sorted, as
    ``point_key`` hashes it) and its stored spec's digest (in its keys' order)."""
    out = []
    for pt in expand_points(c):
        point = json.loads(json.dumps(pt.point_dict(), sort_keys=True, default=str))
        stored = {k: v for k, v in pt.to_dict().items() if k != "point_key"}
        out.append(f"{_hashed(point)} {_hashed(stored)}")
    return out


def campaign_of(name: str) -> Any:
    """An example (``NAME.toml``) or one of ``DOCS``, parsed."""
    if name in DOCS:
        return campaign.parse(tomllib.loads(DOCS[name]), name, base_dir=EXAMPLES)
    return campaign.load(EXAMPLES / name)


def campaigns() -> dict[str, Any]:
    """The campaigns whose keys are held: every example that parses here, and ``DOCS``."""
    found: dict[str, Any] = {}
    for name in [p.name for p in sorted(EXAMPLES.glob("*.toml"))] + list(DOCS):
        try:
            found[name] = campaign_of(name)
        except Exception:  # a build's sources, a git clone: not on every machine
            continue
    return found


# computed on da833da: each point's key and its stored spec's digest (keys_of)
KEPT: dict[str, list[str]] = {
    "auto-repeats.toml": [
        "56040c159db96549 a6970305f9ed475b",
        "68b91a4a4737e9e1 e81865c574305530",
        "1773f5bb2567b6f0 006cb798511f758a",
    ],
    "cache-regime.toml": [
        "45bf9daf9031781f a69f7cac8dfb7b56",
        "b71fa9bb2ab643ae 24df575c52d19781",
    ],
    "cores-scaling.toml": [
        "78a83b9260cd5cc4 f6fdeb8b83d885e4",
        "3febd5b7a50392c8 f7701b1800a493b0",
        "3268ab263c0d7272 2bcc1bb584610c33",
        "907884d8effa4a88 2026c88a3dcc3ac4",
        "1763deea3f038fcb bbb95c666ef799e2",
        "c144d9b7fbe8bb2a f1321eb72961cc62",
    ],
    "existing-server.toml": [
        "f03e0e4d74500b75 15845ebfc60906a7",
        "cce058242ba97af3 27473a787a2461aa",
        "b76bd73f6b1c61bd 50111ecd7e6f3a86",
        "f07e0978dbc25e3c e2b02fa0df99125f",
    ],
    "first-campaign.toml": [
        "ecf8b187533af89b 421a589532080e63",
        "6b7c8c1c791f095f 46c3c458f1f28eb3",
        "7f12ea6dca68c429 00b4d9ddd12669f3",
        "09e4afaa91b566c1 1fc93bf3611dc42b",
    ],
    "live-view.toml": [
        "1f6b04d722fe371c cb0bbd3606e1bfbb",
    ],
    "nightly.toml": [
        "89bd2a8e52fdb9a5 2abecb01497fd5d5",
        "dc9ba6655edb9789 9055161393c57397",
        "267b951fd36aecbf ca991f139333aec7",
        "51ade7a5e84f7b5c d4cbca4ff6f2104d",
    ],
    "os-on-host.toml": [
        "2e48819847646f90 606291fd1630b896",
        "7efdb0ffc84e8e11 5e80fadc4be5bc69",
    ],
    "patch-ab.toml": [
        "586835b1d1a8e3d1 96b8f7165ef71e8e",
        "a5ed56b5bdf4bef8 e03fb96b33f5cbd6",
        "33fa72cf3f5f0cf6 ac1d53836fc43d0c",
        "51e796c8e5eab076 8c7c0bfac9b58655",
    ],
    "replay.toml": [
        "3e76c038cecd313c 597f79a30dd92dc7",
        "2a433259569de5aa 5dcd86c9773005ad",
    ],
    "seed000-filesystems.toml": [
        "91067ab894df6d18 f7112fc4138574e1",
        "fee9b7a7cb5d3be3 654643e0fb829025",
        "eb545c5852186b17 637d2f837ded52ec",
    ],
    "seed000-phases.toml": [
        "de44b995bd8cadea 7bc64661610d8df3",
    ],
    "seed002-os-tuning.toml": [
        "afaa60f9ed68d079 738086c6f0b0b713",
        "d65d260bd7bb3726 ff86769f91b91c03",
        "c56bef839a51bf52 bbf417ff90f9f925",
        "27d616c29cb2fe65 f41e7ff444b9f845",
        "862e504dd2864762 4b087f77dde24359",
        "61eb6834e982e001 5dfae46e25b42c8e",
        "9f3de005cf566257 1f7d80823d753fc0",
        "621fbbeb6b897e48 9538f3f7cf5201c4",
    ],
    "seed003-ext4-journal.toml": [
        "43f2c9528c5a2979 0863044106531dc1",
        "cb026fe8451b9bc4 e85460541915f3ee",
        "b08c942ff7f2be55 b56acfbb3477deca",
        "545284f2c1eb8980 599d8d5be2f6b39c",
        "81abc8790a8ce2f6 62d3e5faea8e4b29",
        "10b09ad7a95c4230 91e2ce738948a00c",
        "ffb3c9bed531fa7b 5c4927d98964a78b",
        "d39ecf6a5d648b23 8d284cc740bf9424",
        "aa43c10c23c6df54 fb95d2ac1e6e4403",
        "3702b04856f47ed1 5bbfdfecb7f4a1c2",
        "12ddb273c276b59a d6beade57e466d5b",
        "6e578a27ab640d05 d20f3180049735b6",
        "7247fde1e60d0c0f dd17bf9e66dfc203",
        "b9d088bc424a20db dc03e9ec560c486d",
        "0f0a9e609d27ff75 24f741580a8249cf",
        "54c8239863f02b65 dc577c4d113ecd52",
        "15fcb7e75272243d bdfe1aae82d79d4b",
        "93690af3ac5f7850 906cf0461a5a2a3b",
    ],
    "seed003-matrix.toml": [
        "f37fb296f32575d7 1ed3006d571df72d",
        "a2b16df5f3172810 97691fddc7f843ec",
        "d8ae08d89eccdc50 d520984b20613f31",
        "eb5ece5a7d4c66bd beed4aa96a487365",
        "c5a730753322aeac c4c202c0db80e4a3",
        "7bb43c4e69a6e324 28d032db170a3dec",
        "d6fd0b8e090a1c72 22aa669a4506a5de",
        "406250300e23a48c d8dca126c486fd75",
        "93213f058771d8a9 dcaf9e5d83c9f760",
    ],
    "seed004-hot-functions.toml": [
        "79fe7cbab0235a3a a3e9ab209d9f2bda",
        "5483579c2ca9a6a8 8c01a1ec58de5357",
    ],
    "seed004-insert-scaling.toml": [
        "ef034f421e5f614b a6ce879afa70a67f",
        "8cf5fe237a55dfa9 32705709dd38552f",
        "28a32aac0b5fb862 a7273ec66878dac6",
        "a34180abdae418e6 45b1d759ef9e9a3e",
        "98428ad771181181 a27b05d44d0fd4f4",
        "0d64c9a30c452595 b91a70776d92b626",
        "7d3d19b620e82524 a5823ca7ab388419",
        "32912195cbeec7d5 7511ecd879378193",
        "bf7b20ae7a690a90 0118f97e0b24cee0",
        "2b1fab856a567246 adc90bf4b11ac2e9",
    ],
    "seed004-maintenance.toml": [
        "e86812cd61e0c6d1 adfecf00ad07c447",
        "af74091ccbe4a3a9 4b921c58873c2294",
        "e700649636558d4a 3d44704aa0fd1fa7",
        "0b67539c6197d3b4 520b34ca57ae4d5c",
    ],
    "seed004-seqscan-vacuum.toml": [
        "62721f286ae68239 79d89bc0b08585cc",
    ],
    "server-on-host.toml": [
        "14ea8c133c23d16b 759a2fb1b1e1e020",
        "32c58c795c8d8ebb e553b7d88f2dff31",
    ],
    "settings-sweep.toml": [
        "7b4a1506e1806e74 9e0e5baf2fb890cc",
        "af0eae60a28328ce 2087814100becd81",
        "cb5d2b2a519a785a e9748851c0557bdf",
        "49c1869dfbb7a4cf 5d7c27c4533920f2",
        "a05aa9746299652a 4fced0e9ea77f387",
        "dfd9a4b1bc916243 5d014d5234d5a224",
    ],
    "sysbench-vs-pgbench.toml": [
        "e9095e202b772f9c 4e736dc3f564f8df",
        "ce53cd1e1d9db9f4 c69aa23883db654e",
        "e25e509240dde8f5 6c7b03231f3facbd",
        "99507737bccf4dda 4a2041eebd6ee572",
    ],
    "tpcc-pacing-spec.toml": [
        "9a858a62d54d7169 830d6a7845342045",
    ],
    "tpcc-scaling.toml": [
        "44a2ab617b9383e6 dd8397f241b760b8",
        "7b6c6f7dd35f55d5 529a35b45c890fc1",
        "01cbb3cc80241a0d f8893efcbf7b0897",
        "3ddd0925c19d0858 c38ee75dffcbfdbd",
        "65daa5c9bf26254e e4b589cfeb01981b",
        "cb378ae8b094a370 71f441a3565e4375",
        "d35b9b4755ef6d0e c40956929e0703d8",
        "c710d2318b2aa35e 83147bea6e056a32",
    ],
    "tpcc-think-time.toml": [
        "fd6fff810f68e749 d2e3da76a93b4c46",
        "7c4a845d18d1c294 3b5e394a87054d23",
        "de49a9c2127c4769 8497f38ea86847cd",
    ],
    "tpcc-vs-tpcb.toml": [
        "c5a56cda469c8c84 6dbd5388871b0557",
        "fff2d92b2fec07f5 d85aa8a5bee97c2c",
        "f8fd5f13e6989345 0ec7caeda64816ac",
        "1e44bebbe6fd3f8e a555c7ff4fdb6674",
    ],
    "tpce-scaling.toml": [
        "bbcbf9bea2baf481 fec97398bcf16c86",
        "c050baa9b9db7780 8907ef31fd35ed17",
        "19924bcf5068cd2f 31a3a1fe0151dee6",
        "0dd8d4f950f8061d 827ee92d3072077c",
        "7a31394a1bc2d7cf 6f171a7c0db9cf25",
        "57bc5f36d2ea6f71 1646b7b95b95b906",
        "2079ebce484ffc77 ca0a0bda6994837d",
        "e754fb4d0c64222e dfbfd7143a567a38",
        "be2091c923bb1b1d c2b1598c9f69d28c",
        "182ef757bf712f42 cad139cd7e8565a1",
    ],
    "tpch-versions.toml": [
        "e74a033e3546b4e6 422c4058d388a5a4",
        "0e5618883eef95e0 fc15a306a695ad7a",
    ],
    "tpch-work-mem-plans.toml": [
        "1bcec52342c7e7b7 f774b5eb17bb3bbc",
        "d1506e463d5f896e fd4428b5f6993e50",
    ],
    "tpch-work-mem.toml": [
        "a56bdc88985c1a22 e774ff65a7d29a84",
        "499d7802ba46ec45 318a344870eed8d5",
        "d6535ec0b51c3d95 174ef1f235aeb905",
        "a5f5f4ade8961540 f11ed1c4041604ab",
    ],
    "versions.toml": [
        "1b8eedda65ea2104 333553c30c36e096",
        "88a7b0ec31a4e3ac 218b600d5c882ecc",
        "a5b8181a5a878f5f 80807704c7e63362",
        "2ff9fa4ace36a7d2 ed863addad12652a",
        "5dd91aa9737e26a8 3c1389ef173c6583",
        "a3128af8d40a223b 037c6ab0e41e3db9",
    ],
    "wal-compression.toml": [
        "944999a65dca6f19 56789d3bbb1b7c90",
        "a42ddd7251ec41d0 c1a382b6b486c144",
        "4784304766176ac5 5fd1cdae907f4b0b",
        "8a1928ccb98a8830 ff96fa6751453b54",
    ],
    "why-it-changed.toml": [
        "77ca25ab81e0d4ff 5064cf3c67f2076d",
        "05cc2c21ece18592 74f3c5c6901e8402",
    ],
    "ycsb-zipf.toml": [
        "1f16837b2b6a111f c0eb1a7b7eb7457c",
        "297c1730370fdcd0 f926382acf4694a7",
        "7d488c030413ad5c 1f85e711c09744f1",
        "db0e0fe6edc06079 0aed3aab2b0e0a77",
        "9a2ce90c16a769e1 1aa5a9e29cfb42b4",
        "dfcc0d30d24efeda 4867cec67ad216e9",
        "04b61295eb787cc0 0285af01a330c993",
        "039fbde231e3ca47 7f71e98d43d827ac",
    ],
    "operation-beside-pgbench-options": [
        "01f9fdca3db6dc4e ebe2ee5dde530d36",
        "7a790e6c285c0e3d 20ee2a55b2eb8de6",
    ],
    "operation-switched-for-a-script": [
        "9b0ca979da3e240c 5a421d94d58dd3cc",
        "7f6bca65cfe066a9 2ee798f92759f69a",
    ],
    "sysbench-rate-and-seed": [
        "73f4ce94fccfee2b f44311cb23ee7db5",
    ],
    "tpcc-paced": [
        "7b11048781e5c141 273d153a0ad5aa99",
    ],
    "ycsb-distribution": [
        "8172b425600093ee 9f7e410dfdcc5137",
        "79a6f495b3765916 3c15a1c09dccc992",
    ],
    "tpch-throughput": [
        "13bd2161317a568e 764f2a3e3c5f9998",
    ],
    "pgbench-every-option": [
        "a2160cec22eb0bcb b2dc759f93461024",
    ],
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_every_point_keeps_its_key_and_its_stored_spec(name: str) -> None:
    assert keys_of(campaign_of(name)) == KEPT[name]


def test_the_held_keys_cover_every_kind() -> None:
    assert {"seed004-maintenance.toml", "replay.toml", "sysbench-vs-pgbench.toml"} <= set(KEPT)
    assert {"tpch-work-mem.toml", "tpcc-scaling.toml", "ycsb-zipf.toml"} <= set(KEPT)
    assert set(DOCS) <= set(KEPT)
