"""The same events as `icelab.datagen.events`, computed with numpy and pyarrow instead of Spark.

Every value follows the Spark SQL expression of the same name in `events.py`, `timeline.py` and
`draws.py`, draw for draw: a draw is Spark's `xxhash64(seed, key, salt[, i])` (`spark_hash`), and
the arithmetic is done in the same order and types (bigint, double, and Spark's decimal literals
where the exact value matters). `tests/datagen/test_arrow_events.py` holds the two to the same
rows, value for value, on a Spark-generated batch.

The shape of the rows (field order, nullability) is the Spark schema of `generate_rows`, passed in
as an Arrow schema (`arrow_schema`): this module supplies values by field name.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import types as T

from icelab.core.config import DatasetConfig
from icelab.datagen import events as E
from icelab.datagen import spark_hash as H
from icelab.datagen.draws import salt
from icelab.datagen.timeline import DAY_US, HOUR_US, batch_rows, hour_table, start_micros

_MANTISSA = np.int64(2**53 - 1)
_SCALE = 9007199254740992.0


def arrow_type(dtype: T.DataType) -> pa.DataType:
    """The Arrow type of a Spark type, nested nullability kept (Spark's Parquet writer keeps it)."""
    if isinstance(dtype, T.StructType):
        return pa.struct([pa.field(f.name, arrow_type(f.dataType), f.nullable) for f in dtype.fields])
    if isinstance(dtype, T.ArrayType):
        return pa.list_(pa.field("element", arrow_type(dtype.elementType), dtype.containsNull))
    if isinstance(dtype, T.MapType):
        return pa.map_(
            pa.field("key", arrow_type(dtype.keyType), False),
            pa.field("value", arrow_type(dtype.valueType), dtype.valueContainsNull),
        )
    simple = {
        T.StringType: pa.string(),
        T.IntegerType: pa.int32(),
        T.LongType: pa.int64(),
        T.DoubleType: pa.float64(),
        T.BooleanType: pa.bool_(),
        T.DateType: pa.date32(),
        T.TimestampType: pa.timestamp("us", tz="UTC"),
    }
    for spark_type, arrow in simple.items():
        if isinstance(dtype, spark_type):
            return arrow
    raise TypeError(f"no Arrow type for {dtype.simpleString()}")


def arrow_schema(schema: T.StructType) -> pa.Schema:
    """The Arrow schema of a Spark schema."""
    return pa.schema([pa.field(f.name, arrow_type(f.dataType), f.nullable) for f in schema.fields])


class Keyed:
    """Draws keyed like `Draws.u(name, key)`: the hash chain after (seed, key...) is kept."""

    def __init__(self, state: np.ndarray) -> None:
        self.state = state

    def u(self, name: str, extra: np.ndarray | int | None = None) -> np.ndarray:
        """`Draws.u(name, key, extra)`: a double in [0, 1)."""
        with np.errstate(over="ignore"):
            h = H.hash_literal(salt(name), self.state)
            if extra is not None:
                h = H.hash_int(extra, h)
        return (H.signed(h) & _MANTISSA).astype(np.float64) / _SCALE

    def index(self, name: str, n: int, skew: float = 1.0) -> np.ndarray:
        """`Draws.index`: floor(n * u ** skew) as an int."""
        drawn = self.u(name)
        if skew != 1.0:
            drawn = np.power(drawn, skew)
        return np.floor(n * drawn).astype(np.int64)

    def choice(self, name: str, values: Sequence[str]) -> pa.Array:
        """`Draws.choice`."""
        return _pick(values, self.index(name, len(values)))

    def weighted_index(self, name: str, weighted: Sequence[tuple[str, float]]) -> np.ndarray:
        """The position `Draws.weighted`'s CASE picks: the first cumulative weight above u."""
        total = sum(w for _, w in weighted)
        cum, cums = 0.0, []
        for _, weight in weighted[:-1]:
            cum += weight / total
            cums.append(cum)
        return np.searchsorted(np.array(cums), self.u(name), side="right")

    def weighted(self, name: str, weighted: Sequence[tuple[str, float]]) -> pa.Array:
        """`Draws.weighted`."""
        return _pick([v for v, _ in weighted], self.weighted_index(name, weighted))

    def chance(self, name: str, p: float) -> np.ndarray:
        """`Draws.chance`."""
        return self.u(name) < p

    def money(self, name: str, lo: float, hi: float, extra: np.ndarray | None = None) -> np.ndarray:
        """`Draws.money`: whole cents in [lo, hi)."""
        cents = np.floor(self.u(name, extra) * int((hi - lo) * 100)).astype(np.int64)
        return (int(lo * 100) + cents).astype(np.float64) / 100.0


def _pick(values: Sequence[str], index: np.ndarray) -> pa.Array:
    return pc.take(pa.array(list(values), pa.string()), pa.array(index, pa.int64()))


def _text(values: np.ndarray) -> pa.Array:
    """Spark's cast(int as string)."""
    return pc.cast(pa.array(values), pa.string())


def _concat(*parts: Any) -> pa.Array:
    """Spark's concat (null if any part is null)."""
    return pc.binary_join_element_wise(*parts, "")


def _hex(h: np.ndarray) -> pa.Array:
    """Spark's lower(hex(bigint)): two's complement digits, no leading zeros."""
    return pa.array([format(v, "x") for v in np.asarray(h, dtype=np.int64).view(np.uint64).tolist()])


class Struct(dict):
    """A struct value: its fields by name, null where `valid` is false."""

    def __init__(self, valid: np.ndarray | None = None, **fields: Any) -> None:
        super().__init__(fields)
        self.valid = valid


def _value(x: np.ndarray) -> Struct:
    return Struct(value=x)


def _counter(etype: pa.Array, event_type: str) -> Struct:
    return _value(np.where(_is(etype, event_type), 1.0, 0.0))


def _is(etype: pa.Array, event_type: str) -> np.ndarray:
    return pc.equal(etype, event_type).to_numpy(zero_copy_only=False)


def assemble(value: Any, dtype: pa.DataType) -> pa.Array:
    """An Arrow array of `dtype` from nested values (`Struct`, arrays, numpy arrays)."""
    if isinstance(dtype, pa.StructType):
        children = [assemble(value[f.name], f.type) for f in dtype]
        mask = None if value.valid is None else pa.array(~value.valid)
        return pa.StructArray.from_arrays(children, fields=list(dtype), mask=mask)
    if isinstance(value, pa.Array):
        return value if value.type == dtype else value.cast(dtype)
    return pa.array(value, dtype)


def _lists(counts: np.ndarray) -> pa.Array:
    return pa.array(np.concatenate([[0], np.cumsum(counts)]).astype(np.int32))


def _timestamps(ds: DatasetConfig, batch: np.ndarray, by_id: Keyed) -> np.ndarray:
    """`timeline.timestamp_sql`: micros since the epoch."""
    # recent_lo = batch * interval: a bigint times a decimal literal, exact, then a double.
    interval = Decimal(repr(ds.span_days / ds.commits))
    late_max = Decimal(repr(float(ds.late_max_days)))
    batches = np.unique(batch)
    recent = {int(b): Decimal(int(b)) * interval for b in batches}
    recent_lo = np.array([float(recent[int(b)]) for b in batches])[np.searchsorted(batches, batch)]
    depth = np.array([float(min(late_max, recent[int(b)])) for b in batches])[np.searchsorted(batches, batch)]
    kind, t = by_id.u("arrival.kind"), by_id.u("arrival.t")
    skew, late = ds.clock_skew_fraction, ds.clock_skew_fraction + ds.late_fraction
    position = np.where(
        kind < skew,
        t * ds.span_days,
        np.where(
            kind < late,
            recent_lo - depth * np.power(t, 2.0),
            recent_lo + t * float(interval),
        ),
    )
    day = np.minimum(np.maximum(np.floor(position).astype(np.int64), 0), ds.span_days - 1)
    table = np.array(hour_table(), dtype=np.int64)
    hour = table[by_id.index("time.hour", len(table))]
    within = np.floor(by_id.u("time.within_hour") * HOUR_US).astype(np.int64)
    return start_micros(ds) + day * DAY_US + hour * HOUR_US + within


def _per_user(users: np.ndarray, seed: int) -> dict[str, Any]:
    """Every field keyed by `_user`, once per distinct user (`events._environment`, `_device`,
    `_end_user_ids`, `_identity_map`, `place.tz`, `user.auth`)."""
    d = Keyed(H.hash_int(users, H.start(seed)))
    with np.errstate(over="ignore"):
        aaid_hash = H.hash_int(users, H.start(11))
    os_index = d.weighted_index("env.os", E.OSES)
    os_ = _pick([v for v, _ in E.OSES], os_index)
    mobile = np.isin(os_index, [i for i, (v, _) in enumerate(E.OSES) if v in ("Android", "iOS")])
    country_index = d.weighted_index("geo.country", E.COUNTRIES)
    codes = [v for v, _ in E.COUNTRIES]
    country = _pick(codes, country_index)
    browser_index = d.weighted_index("browser", E.BROWSERS)
    browser = [v for v, _ in E.BROWSERS]
    user_text = _text(users)
    octets = [_text(d.index("ip.a", 223) + 1)] + [_text(d.index("ip." + o, 256)) for o in "bcd"]
    in_states = np.isin(country_index, [codes.index(c) for c in ("US", "CA", "AU", "IN", "BR", "MX")])
    is_us = country_index == codes.index("US")
    ecid = _concat("ecid-", pc.utf8_lpad(user_text, 9, "0"))
    return {
        "mobile": mobile,
        "auth": d.chance("user.auth", 0.3),
        "crm": d.chance("crm", 0.5),
        "aaid": d.chance("aaid", 0.5),
        "aaid_id": pc.utf8_upper(_hex(aaid_hash)),
        "ecid": ecid,
        "user_text": user_text,
        "os": os_,
        "ipV4": pc.binary_join_element_wise(*octets, "."),
        "os_version": _concat(_text(10 + d.index("os.v", 8)), ".", _text(d.index("os.minor", 5))),
        "carrier": d.choice("carrier", ["Verizon", "Vodafone", "T-Mobile", "Orange", "Jio"]),
        "browser": Struct(
            name=_pick(browser, browser_index),
            vendor=_pick([E.BROWSER_VENDORS[b] for b in browser], browser_index),
            version=_concat(_text(100 + d.index("browser.v", 30)), ".0"),
            userAgent=_concat("Mozilla/5.0 (", os_, ") icelab/", _text(users % 97)),
            acceptLanguage=d.choice("lang", ["en-US", "en-GB", "de-DE", "fr-FR", "ja-JP", "pt-BR"]),
            cookiesEnabled=~d.chance("cookies", 0.03),
            javaScriptEnabled=np.ones(len(users), dtype=bool),
            viewportWidth=np.where(mobile, 360 + d.index("vw", 80), 1280 + d.index("vw", 640)),
            viewportHeight=np.where(mobile, 640 + d.index("vh", 200), 720 + d.index("vh", 360)),
        ),
        "zip": pc.utf8_lpad(_text(d.index("geo.zip", 99999)), 5, "0"),
        "country": country,
        "state": pc.if_else(
            pa.array(in_states),
            _concat(country, "-", _text(d.index("geo.state", 20))),
            pa.scalar(None, pa.string()),
        ),
        "city": _concat(country, "-city-", _text(d.index("geo.city", 12, skew=2.0))),
        "dma": pa.array(500 + d.index("geo.dma", 210), mask=~is_us),
        "latitude": np.round(-60 + d.index("geo.lat", 1400000) / 10000.0, 4),
        "longitude": np.round(-180 + d.index("geo.lon", 3600000) / 10000.0, 4),
        "maker": d.choice("dev.maker", E.MANUFACTURERS),
        "model": _concat("Model-", _text(d.index("dev.model", 40))),
        "mtype": d.weighted("dev.mtype", [("Mobile", 85), ("Tablet", 15)]),
        "sw": d.index("dev.sw", 2),
        "sh": d.index("dev.sh", 2),
        "depth": d.choice("dev.depth", ["24", "30"]),
        "tz": pc.cast(d.choice("place.tz", ["-480", "-300", "0", "60", "330", "540"]), pa.int32()),
    }


def _take(per_user: dict[str, Any], inverse: np.ndarray) -> dict[str, Any]:
    where = pa.array(inverse)
    out: dict[str, Any] = {}
    for key, value in per_user.items():
        if isinstance(value, Struct):
            out[key] = Struct(**_take(dict(value), inverse))
        elif isinstance(value, pa.Array):
            out[key] = pc.take(value, where)
        else:
            out[key] = value[inverse]
    return out


def _product_list_items(ds: DatasetConfig, state: np.ndarray, commerce: np.ndarray) -> Any:
    """`events._product_list_items`: 1 to 4 items on a commerce event, else null."""
    d = Keyed(state)
    n_items = (1 + np.floor(d.u("plist.n") * 4)).astype(np.int64)
    counts = np.where(commerce, n_items, 0)
    row = np.repeat(np.arange(len(state)), counts)
    i = (np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + 1).astype(np.int64)
    item = Keyed(state[row])
    with np.errstate(over="ignore"):
        by_item = Keyed(H.hash_int(i, state[row]))  # key "id, i": the item number before the salt
    sku = _text(np.floor(ds.products * np.power(item.u("plist.sku", i), ds.popularity_skew)).astype(np.int64))
    items = Struct(
        SKU=_concat("SKU-", pc.utf8_lpad(sku, 6, "0")),
        name=_concat("Product ", sku),
        quantity=(1 + np.floor(item.u("plist.qty", i) * 3)).astype(np.int64),
        priceTotal=by_item.money("plist.price", 2, 500),
        currencyCode=pa.array(np.full(len(row), "USD")),
    )
    return counts, items


def batch_arrays(ds: DatasetConfig, batch: int, schema: pa.Schema) -> pa.Table:
    """One ingest batch as an Arrow table of `schema` (the Spark schema of `generate_batch`)."""
    lo, hi = batch_rows(ds, batch)
    return rows_table(ds, np.arange(lo, hi, dtype=np.int64), schema)


def rows_table(ds: DatasetConfig, ids: np.ndarray, schema: pa.Schema) -> pa.Table:
    """The events with these row ids, in id order, as an Arrow table of `schema`."""
    n = len(ids)
    seed = ds.seed
    with np.errstate(over="ignore"):
        state = H.hash_long(ids, H.start(seed))  # xxhash64(seed, id): every id-keyed draw goes on from it
        order_hash = H.hash_long(ids, H.start(7))
    d = Keyed(state)
    batch = ids * ds.commits // ds.total_rows
    ts = _timestamps(ds, batch, d)
    k = ds.popularity_skew
    user = d.index("key.user", ds.users, skew=k)
    page = d.index("key.page", ds.pages, skew=k)
    etype = d.weighted("key.etype", E.EVENT_TYPES)
    users, inverse = np.unique(user, return_inverse=True)
    u = _take(_per_user(users, seed), inverse)
    mobile, auth = u["mobile"], u["auth"]
    commerce = pc.starts_with(etype, "commerce.").to_numpy(zero_copy_only=False)

    pages, page_inverse = np.unique(page, return_inverse=True)
    by_page = Keyed(H.hash_int(pages, H.start(seed)))
    page_text = pc.take(_text(pages), pa.array(page_inverse))
    section = pc.take(by_page.choice("page.section", E.SECTIONS), pa.array(page_inverse))
    url = _concat("https://shop.example.com/", section, "/p", page_text)
    web = Struct(
        valid=~_is(etype, "application.launch"),
        webPageDetails=Struct(
            name=_concat("page-", page_text),
            URL=url,
            siteSection=section,
            server=d.choice("page.server", ["www1", "www2", "www3", "edge"]),
            isHomePage=page == 0,
            isErrorPage=d.chance("page.error", 0.01),
            pageViews=_counter(etype, "web.webpagedetails.pageViews"),
        ),
        webReferrer=Struct(
            valid=d.chance("ref.present", 0.6),
            URL=_concat(
                "https://",
                d.choice("ref.host", ["google.com", "bing.com", "facebook.com", "news.example.org"]),
            ),
            type=d.choice("ref.type", ["search_engine", "social", "external", "email"]),
        ),
        webInteraction=Struct(
            valid=_is(etype, "web.webinteraction.linkClicks"),
            name=_concat("link-", _text(d.index("link.n", 50))),
            type=d.choice("link.type", ["other", "download", "exit"]),
            URL=url,
            linkClicks=_value(np.ones(n)),
        ),
    )
    environment = Struct(
        type=pa.array(np.where(_is(etype, "application.launch"), "application", "browser")),
        ipV4=u["ipV4"],
        operatingSystem=u["os"],
        operatingSystemVersion=u["os_version"],
        connectionType=pc.if_else(
            pa.array(mobile), d.choice("conn.m", ["mobile", "wifi"]), d.choice("conn.d", ["lan", "wifi"])
        ),
        carrier=pc.if_else(pa.array(mobile), u["carrier"], pa.scalar(None, pa.string())),
        browserDetails=u["browser"],
        geo=Struct(
            countryCode=u["country"],
            stateProvince=u["state"],
            city=u["city"],
            postalCode=pc.if_else(
                pa.array(~d.chance("geo.zip.null", 0.15)), u["zip"], pa.scalar(None, pa.string())
            ),
            dmaID=u["dma"],
            _schema=Struct(latitude=u["latitude"], longitude=u["longitude"]),
        ),
    )
    device = Struct(
        manufacturer=u["maker"],
        model=u["model"],
        type=pc.if_else(pa.array(mobile), u["mtype"], "Desktop"),
        screenWidth=np.where(mobile, 1080, 1920 + 640 * u["sw"]),
        screenHeight=np.where(mobile, 2340, 1080 + 360 * u["sh"]),
        screenOrientation=pc.if_else(
            pa.array(mobile), d.choice("dev.orient", ["portrait", "landscape"]), "landscape"
        ),
        colorDepth=u["depth"],
    )
    commerce_value = Struct(
        valid=commerce,
        order=Struct(
            valid=_is(etype, "commerce.purchases"),
            purchaseID=_concat("PO-", _hex(order_hash)),
            priceTotal=d.money("order.total", 5, 2000),
            currencyCode=d.choice("order.cur", E.CURRENCIES),
            paymentType=d.choice("order.pay", ["credit_card", "paypal", "gift_card", "wire_transfer"]),
        ),
        productViews=_counter(etype, "commerce.productViews"),
        productListAdds=_counter(etype, "commerce.productListAdds"),
        checkouts=_counter(etype, "commerce.checkouts"),
        purchases=_counter(etype, "commerce.purchases"),
    )
    marketing = Struct(
        valid=d.chance("mkt.present", 0.3),
        trackingCode=_concat("cmp-", _text(d.index("mkt.code", 300, skew=2.0))),
        campaignGroup=_concat("grp-", _text(d.index("mkt.group", 12))),
        campaignName=_concat("Campaign ", _text(d.index("mkt.name", 60, skew=2.0))),
        channel=Struct(
            name=d.choice("mkt.ch", E.CHANNELS), type=d.choice("mkt.chtype", ["paid", "owned", "earned"])
        ),
    )
    end_user_ids = Struct(
        _experience=Struct(
            mcid=Struct(
                id=u["ecid"],
                namespace=Struct(code=pa.array(np.full(n, "ECID"))),
                authenticatedState=pa.array(np.where(auth, "authenticated", "ambiguous")),
            ),
            aaid=Struct(
                valid=u["aaid"], id=u["aaid_id"], namespace=Struct(code=pa.array(np.full(n, "AAID")))
            ),
        )
    )
    search = Struct(
        valid=_is(etype, "search"),
        keywords=d.choice(
            "search.kw", ["shoes", "laptop", "gift card", "headphones", "jacket", "phone case", "tv"]
        ),
        searchEngine=d.choice("search.engine", ["site", "google", "bing"]),
        pageDepth=(1 + np.floor(np.power(d.u("search.depth"), 3.0) * 10)).astype(np.int64),
    )
    values: dict[str, Any] = {
        "_id": _concat(_hex(ids), "-", _hex(state)),
        "timestamp": pa.array(ts, pa.timestamp("us", tz="UTC")),
        "eventType": etype,
        "producedBy": d.weighted("producedBy", [("self", 90), ("system", 8), ("salesRef", 2)]),
        "web": web,
        "environment": environment,
        "device": device,
        "commerce": commerce_value,
        "marketing": marketing,
        "endUserIDs": end_user_ids,
        "search": search,
        "placeContext": Struct(
            localTimezoneOffset=u["tz"], localTime=pa.array(ts, pa.timestamp("us", tz="UTC"))
        ),
        "date": pa.array((ts // DAY_US).astype(np.int32), pa.date32()),
    }
    columns = []
    for field in schema:
        if field.name == "customAttributes":
            columns.append(_custom_attributes(d, n, field.type))
        elif field.name == "productListItems":
            counts, items = _product_list_items(ds, state, commerce)
            element = field.type.value_type
            columns.append(
                pa.ListArray.from_arrays(
                    _lists(counts), assemble(items, element), type=field.type, mask=pa.array(~commerce)
                )
            )
        elif field.name == "identityMap":
            columns.append(_identity_map(u, auth, field.type))
        else:
            columns.append(assemble(values[field.name], field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _custom_attributes(d: Keyed, n: int, dtype: pa.MapType) -> pa.Array:
    """`events._custom_attributes`: each attribute present with chance 0.35, in a fixed order."""
    values = ["a", "b", "c", "gold", "silver", "on", "off"]
    present = np.stack([d.chance("attr." + a, 0.35) for a in E.ATTRIBUTES], axis=1)
    picks = np.stack([d.index("attr.v." + a, len(values)) for a in E.ATTRIBUTES], axis=1)
    keys = np.tile(np.array(E.ATTRIBUTES), (n, 1))[present]
    items = np.array(values)[picks[present]]
    return pa.MapArray.from_arrays(_lists(present.sum(axis=1)), pa.array(keys), pa.array(items), type=dtype)


def _identity_map(u: dict[str, Any], auth: np.ndarray, dtype: pa.MapType) -> pa.Array:
    """`events._identity_map`: ECID always; Email when authenticated; two CRM ids on half of those."""
    n = len(auth)
    crm = auth & u["crm"]
    email = _concat("user", u["user_text"], "@example.com")
    # One row per (event, entry, identity), in map order: ECID, Email, CRMID (two identities).
    entries = np.stack([np.ones(n, bool), auth, crm], axis=1)
    sizes = np.array([1, 1, 2])
    per_row = (entries * sizes).sum(axis=1)
    row = np.repeat(np.arange(n), per_row)
    kind = np.arange(4)  # ECID, Email, crm, crm-legacy
    present = np.stack([entries[:, 0], entries[:, 1], entries[:, 2], entries[:, 2]], axis=1)
    kinds = np.tile(kind, (n, 1))[present]
    take = pa.array(row)
    # Each kind's id for every row, laid end to end; each identity picks from the block of its kind.
    flat = pa.concat_arrays(
        [
            pc.take(u["ecid"], take),
            pc.take(email, take),
            pc.take(_concat("crm-", u["user_text"]), take),
            pc.take(_concat("crm-legacy-", u["user_text"]), take),
        ]
    )
    ident_id = pc.take(flat, pa.array(kinds * len(row) + np.arange(len(row))))
    states = np.array(["ambiguous", "authenticated", "authenticated", "loggedOut"])[kinds]
    primary = np.where(kinds == 0, ~auth[row], kinds == 1)
    element = dtype.item_type.value_type
    identity = assemble(Struct(id=ident_id, authenticatedState=pa.array(states), primary=primary), element)
    entry_sizes = np.where(kinds == 2, 2, 1)[kinds != 3]  # one map entry per kind, CRMID holding two
    entry_key = np.array(["ECID", "Email", "CRMID"])[kinds[kinds != 3]]
    lists = pa.ListArray.from_arrays(_lists(entry_sizes), identity, type=dtype.item_type)
    entry_count = entries.sum(axis=1)
    return pa.MapArray.from_arrays(_lists(entry_count), pa.array(entry_key), lists, type=dtype)
