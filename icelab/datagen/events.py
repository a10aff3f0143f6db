"""The event schema, modelled on Adobe XDM ExperienceEvent, as Spark SQL expressions.

Two stages: `key_columns` draws the per-event keys (time, user, page, event type); the
nested record in `event_columns` is built from those keys, so per-user facts (geo, device,
identities) stay the same for a user across events, as they do in real data.
"""

from __future__ import annotations

from icelab.core.config import DatasetConfig
from icelab.datagen.draws import Draws, sql_str
from icelab.datagen.timeline import timestamp_sql

EVENT_TYPES = [
    ("web.webpagedetails.pageViews", 55),
    ("web.webinteraction.linkClicks", 20),
    ("commerce.productViews", 9),
    ("commerce.productListAdds", 5),
    ("commerce.checkouts", 3),
    ("commerce.purchases", 2),
    ("search", 5),
    ("application.launch", 1),
]
COUNTRIES = [("US", 30), ("GB", 10), ("DE", 9), ("FR", 7), ("IN", 8), ("JP", 6), ("BR", 6),
             ("CA", 5), ("AU", 4), ("ES", 4), ("IT", 3), ("NL", 3), ("MX", 2), ("KR", 2),
             ("SE", 1)]  # fmt: skip
SECTIONS = ["home", "products", "deals", "support", "blog", "account", "checkout", "search"]
BROWSERS = [("Chrome", 62), ("Safari", 20), ("Edge", 8), ("Firefox", 5), ("Samsung Internet", 3),
            ("Opera", 2)]  # fmt: skip
BROWSER_VENDORS = {"Chrome": "Google", "Safari": "Apple", "Edge": "Microsoft",
                   "Firefox": "Mozilla", "Samsung Internet": "Samsung", "Opera": "Opera"}  # fmt: skip
OSES = [("Windows", 30), ("Android", 30), ("iOS", 25), ("macOS", 10), ("Linux", 3),
        ("ChromeOS", 2)]  # fmt: skip
MANUFACTURERS = ["Apple", "Samsung", "Google", "Dell", "Lenovo", "HP", "Xiaomi", "Motorola"]
CHANNELS = ["Paid Search", "Email", "Social", "Display", "Affiliate", "Natural Search"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "INR", "BRL"]
ATTRIBUTES = ["plan", "ab_test", "loyalty_tier", "app_build", "consent"]

# Helper columns of stage 1 that are not part of the event.
KEY_COLUMNS = ["_user", "_page", "_etype", "_auth"]


def key_columns(ds: DatasetConfig, draws: Draws) -> list[str]:
    """Stage 1: id, time and the popularity-skewed keys every field is derived from."""
    k = ds.popularity_skew
    return [
        "id",
        f"{timestamp_sql(ds, draws)} AS timestamp",
        f"{draws.index('key.user', ds.users, skew=k)} AS _user",
        f"{draws.index('key.page', ds.pages, skew=k)} AS _page",
        f"{draws.weighted('key.etype', EVENT_TYPES)} AS _etype",
    ]


def _value(expr: str) -> str:
    return f"named_struct('value', {expr})"


def _opt(cond: str, expr: str) -> str:
    """expr where cond holds, else NULL (absent in XDM)."""
    return f"CASE WHEN {cond} THEN {expr} END"


def _struct(**fields: str) -> str:
    """named_struct from keyword arguments, in order."""
    return "named_struct(" + ", ".join(f"{sql_str(k)}, {v}" for k, v in fields.items()) + ")"


def _is(event_type: str) -> str:
    return f"_etype = {sql_str(event_type)}"


def _counter(event_type: str) -> str:
    """XDM measure: value 1 on events of this type, else 0."""
    return _value(f"CASE WHEN {_is(event_type)} THEN 1D ELSE 0D END")


def _web(d: Draws) -> str:
    section = d.choice("page.section", SECTIONS, key="_page")
    url = f"concat('https://shop.example.com/', {section}, '/p', cast(_page as string))"
    referrer = _struct(
        URL=f"concat('https://', {d.choice('ref.host', ['google.com', 'bing.com', 'facebook.com', 'news.example.org'])})",
        type=d.choice("ref.type", ["search_engine", "social", "external", "email"]),
    )
    interaction = _struct(
        name=f"concat('link-', cast({d.index('link.n', 50)} as string))",
        type=d.choice("link.type", ["other", "download", "exit"]),
        URL=url,
        linkClicks=_value("1D"),
    )
    page = _struct(
        name="concat('page-', cast(_page as string))",
        URL=url,
        siteSection=section,
        server=d.choice("page.server", ["www1", "www2", "www3", "edge"]),
        isHomePage="_page = 0",
        isErrorPage=d.chance("page.error", 0.01),
        pageViews=_counter("web.webpagedetails.pageViews"),
    )
    return _opt(
        "_etype <> 'application.launch'",
        _struct(
            webPageDetails=page,
            webReferrer=_opt(d.chance("ref.present", 0.6), referrer),
            webInteraction=_opt(_is("web.webinteraction.linkClicks"), interaction),
        ),
    )


def _environment(d: Draws, os_: str, mobile: str) -> str:
    user = "_user"
    octets = [f"cast({d.index('ip.a', 223, key=user)} + 1 as string)"] + [
        f"cast({d.index('ip.' + o, 256, key=user)} as string)" for o in "bcd"
    ]
    country = d.weighted("geo.country", COUNTRIES, key=user)
    browser_name = d.weighted("browser", BROWSERS, key=user)
    vendors = " ".join(f"WHEN {sql_str(b)} THEN {sql_str(v)}" for b, v in BROWSER_VENDORS.items())
    browser = _struct(
        name=browser_name,
        vendor=f"CASE {browser_name} {vendors} END",
        version=f"concat(cast(100 + {d.index('browser.v', 30, key=user)} as string), '.0')",
        userAgent=f"concat('Mozilla/5.0 (', {os_}, ') icelab/', cast(_user % 97 as string))",
        acceptLanguage=d.choice("lang", ["en-US", "en-GB", "de-DE", "fr-FR", "ja-JP", "pt-BR"], key=user),
        cookiesEnabled=f"NOT {d.chance('cookies', 0.03, key=user)}",
        javaScriptEnabled="true",
        viewportWidth=f"CASE WHEN {mobile} THEN 360 + {d.index('vw', 80, key=user)} ELSE 1280 + {d.index('vw', 640, key=user)} END",
        viewportHeight=f"CASE WHEN {mobile} THEN 640 + {d.index('vh', 200, key=user)} ELSE 720 + {d.index('vh', 360, key=user)} END",
    )
    zip_code = f"lpad(cast({d.index('geo.zip', 99999, key=user)} as string), 5, '0')"
    geo = _struct(
        countryCode=country,
        stateProvince=_opt(
            f"{country} IN ('US', 'CA', 'AU', 'IN', 'BR', 'MX')",
            f"concat({country}, '-', cast({d.index('geo.state', 20, key=user)} as string))",
        ),
        city=f"concat({country}, '-city-', cast({d.index('geo.city', 12, key=user, skew=2.0)} as string))",
        postalCode=_opt(f"NOT {d.chance('geo.zip.null', 0.15)}", zip_code),
        dmaID=_opt(f"{country} = 'US'", f"500 + {d.index('geo.dma', 210, key=user)}"),
        _schema=_struct(
            latitude=f"round(-60 + {d.index('geo.lat', 1400000, key=user)} / 10000D, 4)",
            longitude=f"round(-180 + {d.index('geo.lon', 3600000, key=user)} / 10000D, 4)",
        ),
    )
    return _struct(
        type="CASE WHEN _etype = 'application.launch' THEN 'application' ELSE 'browser' END",
        ipV4=f"concat_ws('.', {', '.join(octets)})",
        operatingSystem=os_,
        operatingSystemVersion=f"concat(cast(10 + {d.index('os.v', 8, key=user)} as string), '.', cast({d.index('os.minor', 5, key=user)} as string))",
        connectionType=f"CASE WHEN {mobile} THEN {d.choice('conn.m', ['mobile', 'wifi'])} ELSE {d.choice('conn.d', ['lan', 'wifi'])} END",
        carrier=_opt(
            mobile,
            d.choice("carrier", ["Verizon", "Vodafone", "T-Mobile", "Orange", "Jio"], key=user),
        ),
        browserDetails=browser,
        geo=geo,
    )


def _device(d: Draws, mobile: str) -> str:
    user = "_user"
    return _struct(
        manufacturer=d.choice("dev.maker", MANUFACTURERS, key=user),
        model=f"concat('Model-', cast({d.index('dev.model', 40, key=user)} as string))",
        type=f"CASE WHEN {mobile} THEN {d.weighted('dev.mtype', [('Mobile', 85), ('Tablet', 15)], key=user)} ELSE 'Desktop' END",
        screenWidth=f"CASE WHEN {mobile} THEN 1080 ELSE 1920 + 640 * {d.index('dev.sw', 2, key=user)} END",
        screenHeight=f"CASE WHEN {mobile} THEN 2340 ELSE 1080 + 360 * {d.index('dev.sh', 2, key=user)} END",
        screenOrientation=f"CASE WHEN {mobile} THEN {d.choice('dev.orient', ['portrait', 'landscape'])} ELSE 'landscape' END",
        colorDepth=d.choice("dev.depth", ["24", "30"], key=user),
    )


def _commerce(d: Draws) -> str:
    order = _struct(
        purchaseID="concat('PO-', lower(hex(xxhash64(7, id))))",
        priceTotal=d.money("order.total", 5, 2000),
        currencyCode=d.choice("order.cur", CURRENCIES),
        paymentType=d.choice("order.pay", ["credit_card", "paypal", "gift_card", "wire_transfer"]),
    )
    return _opt(
        IS_COMMERCE,
        _struct(
            order=_opt(_is("commerce.purchases"), order),
            productViews=_counter("commerce.productViews"),
            productListAdds=_counter("commerce.productListAdds"),
            checkouts=_counter("commerce.checkouts"),
            purchases=_counter("commerce.purchases"),
        ),
    )


def _marketing(d: Draws) -> str:
    return _opt(
        d.chance("mkt.present", 0.3),
        _struct(
            trackingCode=f"concat('cmp-', cast({d.index('mkt.code', 300, skew=2.0)} as string))",
            campaignGroup=f"concat('grp-', cast({d.index('mkt.group', 12)} as string))",
            campaignName=f"concat('Campaign ', cast({d.index('mkt.name', 60, skew=2.0)} as string))",
            channel=_struct(
                name=d.choice("mkt.ch", CHANNELS),
                type=d.choice("mkt.chtype", ["paid", "owned", "earned"]),
            ),
        ),
    )


def _end_user_ids(d: Draws) -> str:
    mcid = _struct(
        id=ECID,
        namespace=_struct(code="'ECID'"),
        authenticatedState="CASE WHEN _auth THEN 'authenticated' ELSE 'ambiguous' END",
    )
    aaid = _struct(id="upper(hex(xxhash64(11, _user)))", namespace=_struct(code="'AAID'"))
    return _struct(_experience=_struct(mcid=mcid, aaid=_opt(d.chance("aaid", 0.5, key="_user"), aaid)))


def _search(d: Draws) -> str:
    keywords = ["shoes", "laptop", "gift card", "headphones", "jacket", "phone case", "tv"]
    return _opt(
        _is("search"),
        _struct(
            keywords=d.choice("search.kw", keywords),
            searchEngine=d.choice("search.engine", ["site", "google", "bing"]),
            pageDepth=f"cast(1 + floor(pow({d.u('search.depth')}, 3) * 10) as int)",
        ),
    )


def _custom_attributes(d: Draws) -> str:
    values = ["a", "b", "c", "gold", "silver", "on", "off"]
    entries = ", ".join(
        f"{sql_str(a)}, {_opt(d.chance('attr.' + a, 0.35), d.choice('attr.v.' + a, values))}"
        for a in ATTRIBUTES
    )
    return f"map_filter(map({entries}), (k, v) -> v IS NOT NULL)"


def _product_list_items(ds: DatasetConfig, d: Draws) -> str:
    # `i` is the lambda's item number: each item of an event draws its own product.
    sku = f"cast(floor({ds.products} * pow({d.u('plist.sku', extra='i')}, {ds.popularity_skew})) as string)"
    item = _struct(
        SKU=f"concat('SKU-', lpad({sku}, 6, '0'))",
        name=f"concat('Product ', {sku})",
        quantity=f"cast(1 + floor({d.u('plist.qty', extra='i')} * 3) as int)",
        priceTotal=d.money("plist.price", 2, 500, key="id, i"),
        currencyCode="'USD'",
    )
    n_items = f"cast(1 + floor({d.u('plist.n')} * 4) as int)"
    return _opt(IS_COMMERCE, f"slice(transform(sequence(1, 4), i -> {item}), 1, {n_items})")


def _identity_map(d: Draws) -> str:
    def ident(id_: str, state: str, primary: str) -> str:
        return _struct(id=id_, authenticatedState=sql_str(state), primary=primary)

    email = "concat('user', cast(_user as string), '@example.com')"
    crm = [
        ident("concat('crm-', cast(_user as string))", "authenticated", "false"),
        ident("concat('crm-legacy-', cast(_user as string))", "loggedOut", "false"),
    ]
    email_ids = f"array({ident(email, 'authenticated', 'true')})"
    crm_ids = f"array({', '.join(crm)})"
    entries = [
        f"'ECID', array({ident(ECID, 'ambiguous', 'NOT _auth')})",
        f"'Email', {_opt('_auth', email_ids)}",
        f"'CRMID', {_opt('_auth AND ' + d.chance('crm', 0.5, key='_user'), crm_ids)}",
    ]
    return f"map_filter(map({', '.join(entries)}), (k, v) -> v IS NOT NULL)"


def _place_context(d: Draws) -> str:
    offset = f"cast({d.choice('place.tz', ['-480', '-300', '0', '60', '330', '540'], key='_user')} as int)"
    return _struct(
        localTimezoneOffset=offset,
        localTime=f"timestamp_micros(unix_micros(timestamp) + {offset} * 60000000L)",
    )


IS_COMMERCE = "_etype LIKE 'commerce.%'"
ECID = "concat('ecid-', lpad(cast(_user as string), 9, '0'))"


def event_columns(ds: DatasetConfig, draws: Draws) -> list[str]:
    """Stage 2: the nested event record (about 80 leaf fields) from the stage-1 keys."""
    d = draws
    os_ = d.weighted("env.os", OSES, key="_user")
    mobile = f"({os_} IN ('Android', 'iOS'))"
    return [
        f"concat(lower(hex(id)), '-', lower(hex(xxhash64({d.seed}, id)))) AS _id",
        "timestamp",
        "_etype AS eventType",
        f"{d.weighted('producedBy', [('self', 90), ('system', 8), ('salesRef', 2)])} AS producedBy",
        f"{_web(d)} AS web",
        f"{_environment(d, os_, mobile)} AS environment",
        f"{_device(d, mobile)} AS device",
        f"{_commerce(d)} AS commerce",
        f"{_marketing(d)} AS marketing",
        f"{_end_user_ids(d)} AS endUserIDs",
        f"{_search(d)} AS search",
        _struct(
            localTimezoneOffset=f"cast({d.choice('place.tz', ['-480', '-300', '0', '60', '330', '540'], key='_user')} as int)",
            localTime="timestamp",
        )
        + " AS placeContext",
        f"{_custom_attributes(d)} AS customAttributes",
        f"{_product_list_items(ds, d)} AS productListItems",
        f"{_identity_map(d)} AS identityMap",
    ]


def auth_column(draws: Draws) -> str:
    """Whether the event's user is a known (authenticated) customer: 30% of users."""
    return f"{draws.chance('user.auth', 0.3, key='_user')} AS _auth"
