//! The `--prices FILE` TOML: how it changes the built-in families or adds its
//! own (prices, long-context tiers, fast mode, prices by time of day or by date)
//! and windows.

use super::off_peak::OffPeakFile;
use super::prices::{
    DEFAULT_FALLBACK, Earlier, Family, LongContext, PriceError, PriceTable, Prices, Provider, normalize_model,
};
use serde::Deserialize;

impl PriceTable {
    /// The built-in table with a prices file applied:
    ///
    /// ```toml
    /// fallback = "claude-sonnet-4"   # family for unknown models (optional)
    ///
    /// [families.claude-sonnet-4]     # change a built-in family: only the keys given
    /// input = 2.5
    ///
    /// [families.my-model]            # add one: input and output required
    /// provider = "openai"            # default cache multipliers (anthropic | openai)
    /// match = ["my-model", "my-model-large"]   # name fragments (default: the name)
    /// input = 1.0
    /// output = 4.0
    /// cache_read = 0.1               # optional: 0.1 × input
    /// cache_write_5m = 1.25          # optional: anthropic 1.25 × input, else input
    /// cache_write_1h = 2.0           # optional: anthropic 2 × input, else input
    ///
    /// fast = 2                       # optional: fast mode bills every price at 2×
    ///                                # (`fast = false` removes a built-in multiple)
    ///
    /// [families.my-model.off_peak]   # prices by time of day (`off_peak = false`
    /// share = 0.5                    # removes it): off-peak at half the listed prices
    /// peak_utc = ["01:00-04:00", "06:00-10:00"]   # peak windows, UTC
    /// weekends_off_peak = true       # Saturdays and Sundays off-peak all day
    ///
    /// [families.my-model.long]       # long-context tier: a new one needs above,
    /// above = 128000                 # input and output; an existing one takes
    /// input = 2.0                    # only the keys given; `long = false` in
    /// output = 8.0                   # [families.NAME] removes it
    ///
    /// [[families.my-model.earlier]]  # prices before a date (a price cut): each
    /// until = "2026-05-01"           # period needs until (a date, or a time such
    /// input = 2.0                    # as "2026-05-01T09:00:00Z") and input and
    /// output = 8.0                   # output, dates ascending; they replace the
    ///                                # family's periods (`earlier = false`: none);
    ///                                # `off_peak = { share, peak_utc }`: its hours
    ///
    /// [[families.other-model.long]]  # or several tiers, thresholds ascending,
    /// above = 32000                  # each with above, input and output: they
    /// input = 1.8                    # replace the family's tiers
    /// output = 9.0
    ///
    /// [windows]                      # context windows for `context_window = "auto"`
    /// "my-model" = 32000             # name fragment = tokens (wins over built-in ones)
    /// ```
    ///
    /// Every price is USD per million tokens. A model name matches a family when a
    /// fragment occurs in it between `-` boundaries after [`normalize_model`]; the
    /// longest fragment wins, and families from the file are tried first.
    pub fn from_toml(text: &str) -> Result<PriceTable, PriceError> {
        let file: PricesFile = toml::from_str(text).map_err(|e| PriceError::Toml(e.to_string()))?;
        let mut table = PriceTable::builtin();
        for (name, f) in file.families {
            let bad = |reason: &str| PriceError::Family { family: name.clone(), reason: reason.to_string() };
            let family = match table.families.iter().position(|x| x.name == name) {
                Some(i) => {
                    let mut old = table.families.remove(i);
                    f.apply_to(&mut old).map_err(|e| bad(&e))?;
                    if let Some(m) = &f.patterns {
                        old.patterns = m.iter().map(|p| normalize_model(p)).collect();
                    }
                    old
                }
                None => {
                    let (Some(input), Some(output)) = (f.input, f.output) else {
                        return Err(bad("a new family needs `input` and `output`"));
                    };
                    let provider = f.provider.unwrap_or(Provider::Anthropic);
                    let prices = new_prices(provider, input, output);
                    let mut family = Family {
                        name: name.clone(),
                        provider,
                        patterns: f
                            .patterns
                            .clone()
                            .unwrap_or_else(|| vec![name.clone()])
                            .iter()
                            .map(|p| normalize_model(p))
                            .collect(),
                        prices,
                        long: None,
                        more_tiers: Vec::new(),
                        fast: None,
                        off_peak: None,
                        earlier: Vec::new(),
                        user: true,
                    };
                    f.apply_to(&mut family).map_err(|e| bad(&e))?;
                    family
                }
            };
            if !family.prices.all_finite_non_negative() {
                return Err(bad("prices must be non-negative numbers"));
            }
            if family.patterns.iter().any(|p| p.is_empty()) {
                return Err(bad("`match` fragments must not be empty"));
            }
            // File families first: they win over built-in ones at resolution.
            table.families.insert(0, Family { user: true, ..family });
        }
        table.windows = table.windows.with_overrides(&file.windows).map_err(PriceError::Toml)?;
        table.fallback_set = file.fallback.is_some();
        let fallback_name = file.fallback.unwrap_or_else(|| DEFAULT_FALLBACK.to_string());
        table.fallback =
            table.families.iter().position(|f| f.name == fallback_name).ok_or(PriceError::Fallback(fallback_name))?;
        Ok(table)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PricesFile {
    fallback: Option<String>,
    #[serde(default)]
    families: std::collections::BTreeMap<String, FamilyFile>,
    /// Model-name fragment → context window in tokens.
    #[serde(default)]
    windows: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FamilyFile {
    provider: Option<Provider>,
    #[serde(rename = "match")]
    patterns: Option<Vec<String>>,
    input: Option<f64>,
    output: Option<f64>,
    cache_write_5m: Option<f64>,
    cache_write_1h: Option<f64>,
    cache_read: Option<f64>,
    /// The long-context tier: a table ([`LongFile`]), or `false` for none.
    long: Option<toml::Value>,
    /// The fast-mode multiple, or `false` for none.
    fast: Option<toml::Value>,
    /// Prices by time of day: a table (`off_peak::OffPeakFile`), or `false` for none.
    off_peak: Option<toml::Value>,
    /// Prices before dates: an array of tables ([`EarlierFile`]), or `false` for none.
    earlier: Option<toml::Value>,
}

/// `[[families.NAME.earlier]]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct EarlierFile {
    /// A date (`2026-05-01`, the day's start in UTC) or a time with its offset,
    /// as a string or a TOML date.
    until: toml::Value,
    input: f64,
    output: f64,
    cache_write_5m: Option<f64>,
    cache_write_1h: Option<f64>,
    cache_read: Option<f64>,
    /// The period's own hours (share and peak_utc).
    off_peak: Option<OffPeakFile>,
}

/// `[families.NAME.long]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LongFile {
    above: Option<u64>,
    input: Option<f64>,
    output: Option<f64>,
    cache_write_5m: Option<f64>,
    cache_write_1h: Option<f64>,
    cache_read: Option<f64>,
}

/// Prices as a prices file gives them: each one optional.
struct PriceKeys {
    input: Option<f64>,
    output: Option<f64>,
    cache_write_5m: Option<f64>,
    cache_write_1h: Option<f64>,
    cache_read: Option<f64>,
}

impl FamilyFile {
    fn keys(&self) -> PriceKeys {
        let Self { input, output, cache_write_5m, cache_write_1h, cache_read, .. } = *self;
        PriceKeys { input, output, cache_write_5m, cache_write_1h, cache_read }
    }
}

impl LongFile {
    fn keys(&self) -> PriceKeys {
        let Self { input, output, cache_write_5m, cache_write_1h, cache_read, .. } = *self;
        PriceKeys { input, output, cache_write_5m, cache_write_1h, cache_read }
    }
}

impl PriceKeys {
    fn apply_to(&self, p: &mut Prices) {
        for (v, to) in [
            (self.input, &mut p.input),
            (self.output, &mut p.output),
            (self.cache_write_5m, &mut p.cache_write_5m),
            (self.cache_write_1h, &mut p.cache_write_1h),
            (self.cache_read, &mut p.cache_read),
        ] {
            if let Some(v) = v {
                *to = v;
            }
        }
    }
}

impl FamilyFile {
    fn apply_to(&self, f: &mut Family) -> Result<(), String> {
        if let Some(p) = self.provider {
            f.provider = p;
        }
        self.keys().apply_to(&mut f.prices);
        match &self.fast {
            None => {}
            Some(toml::Value::Boolean(false)) => f.fast = None,
            Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
                Some(m) if m.is_finite() && m > 0.0 => f.fast = Some(m),
                _ => {
                    return Err(
                        "`fast` takes a positive number (the fast-mode multiple of every price) or false".into()
                    );
                }
            },
        }
        match &self.off_peak {
            None => {}
            Some(toml::Value::Boolean(false)) => f.off_peak = None,
            Some(toml::Value::Table(t)) => {
                let file = OffPeakFile::deserialize(t.clone()).map_err(|e| format!("`off_peak`: {}", e.message()))?;
                f.off_peak = Some(file.apply_to(f.off_peak.take())?);
            }
            Some(_) => return Err("`off_peak` takes a table (share, peak_utc, weekends_off_peak) or false".into()),
        }
        match &self.earlier {
            None => {}
            Some(toml::Value::Boolean(false)) => f.earlier = Vec::new(),
            Some(toml::Value::Array(periods)) => set_earlier(f, periods)?,
            Some(_) => {
                return Err("`earlier` takes an array of tables ([[families.NAME.earlier]]: until, input, output) \
or false"
                    .into());
            }
        }
        let tier = match &self.long {
            None => return Ok(()),
            Some(toml::Value::Boolean(false)) => {
                (f.long, f.more_tiers) = (None, Vec::new());
                return Ok(());
            }
            Some(toml::Value::Table(t)) => {
                LongFile::deserialize(t.clone()).map_err(|e| format!("`long`: {}", e.message()))?
            }
            Some(toml::Value::Array(tiers)) => return set_tiers(f, tiers),
            Some(_) => {
                return Err("`long` takes a table (above, input, output, …), an array of them, or false".to_string());
            }
        };
        let mut long = match (f.long, tier.above, tier.input, tier.output) {
            (Some(t), ..) => t,
            (None, Some(above), Some(input), Some(output)) => {
                LongContext { above, prices: new_prices(f.provider, input, output) }
            }
            (None, ..) => return Err("a new long-context tier needs `above`, `input` and `output`".to_string()),
        };
        if let Some(a) = tier.above {
            long.above = a;
        }
        tier.keys().apply_to(&mut long.prices);
        if !long.prices.all_finite_non_negative() {
            return Err("long-context prices must be non-negative numbers".to_string());
        }
        f.long = Some(long);
        ascending(f)
    }
}

/// `[[families.NAME.long]]`: every tier of a family, each new (`above`,
/// `input` and `output`), in place of the ones it had.
fn set_tiers(f: &mut Family, tiers: &[toml::Value]) -> Result<(), String> {
    let mut new = Vec::with_capacity(tiers.len());
    for (i, t) in tiers.iter().enumerate() {
        let which = || format!("`long` tier {}", i + 1);
        let t = LongFile::deserialize(t.clone()).map_err(|e| format!("{}: {}", which(), e.message()))?;
        let (Some(above), Some(input), Some(output)) = (t.above, t.input, t.output) else {
            return Err(format!("{}: a tier of an array needs `above`, `input` and `output`", which()));
        };
        let mut tier = LongContext { above, prices: new_prices(f.provider, input, output) };
        t.keys().apply_to(&mut tier.prices);
        if !tier.prices.all_finite_non_negative() {
            return Err(format!("{}: prices must be non-negative numbers", which()));
        }
        new.push(tier);
    }
    let mut new = new.into_iter();
    (f.long, f.more_tiers) = (new.next(), new.collect());
    ascending(f)
}

/// `[[families.NAME.earlier]]`: every earlier period of a family, in place
/// of the ones it had.
fn set_earlier(f: &mut Family, periods: &[toml::Value]) -> Result<(), String> {
    let mut new: Vec<Earlier> = Vec::with_capacity(periods.len());
    for (i, p) in periods.iter().enumerate() {
        let which = || format!("`earlier` period {}", i + 1);
        let p = EarlierFile::deserialize(p.clone()).map_err(|e| format!("{}: {}", which(), e.message()))?;
        let until_ms = until_ms(&p.until).ok_or_else(|| {
            format!(
                "{}: `until` takes a date like \"2026-05-01\" or a time like \"2026-05-01T09:00:00Z\", not `{}`",
                which(),
                p.until.to_string().escape_debug()
            )
        })?;
        let mut prices = new_prices(f.provider, p.input, p.output);
        let keys = PriceKeys {
            input: None,
            output: None,
            cache_write_5m: p.cache_write_5m,
            cache_write_1h: p.cache_write_1h,
            cache_read: p.cache_read,
        };
        keys.apply_to(&mut prices);
        if !prices.all_finite_non_negative() {
            return Err(format!("{}: prices must be non-negative numbers", which()));
        }
        if let Some(last) = new.last()
            && last.until_ms >= until_ms
        {
            return Err(format!("{}: `until` dates must ascend", which()));
        }
        let off_peak = match p.off_peak {
            Some(o) => Some(o.apply_to(None).map_err(|e| format!("{}: {e}", which()))?),
            None => None,
        };
        new.push(Earlier { until_ms, prices, off_peak });
    }
    f.earlier = new;
    Ok(())
}

/// An `until` of a prices file in milliseconds since the Unix epoch: a date
/// (the day's start in UTC) or a time with its offset (`Z` when none).
fn until_ms(v: &toml::Value) -> Option<i64> {
    match v {
        toml::Value::String(s) => crate::read::time::parse_day_or_iso(s),
        toml::Value::Datetime(d) => crate::read::time::parse_day_or_iso(&d.to_string()),
        _ => None,
    }
}

/// A family's tiers must have ascending thresholds, or a longer prompt
/// could be billed at a cheaper tier's prices by the order they were given.
fn ascending(f: &Family) -> Result<(), String> {
    let thresholds: Vec<u64> = f.long.iter().chain(&f.more_tiers).map(|t| t.above).collect();
    match thresholds.windows(2).find(|w| w[0] >= w[1]) {
        Some(w) => Err(format!("`long`: tier thresholds must ascend (`above = {}` comes after {})", w[1], w[0])),
        None => Ok(()),
    }
}

/// A new family's (or tier's) prices: cache rates from `input` as its
/// provider bills them.
fn new_prices(provider: Provider, input: f64, output: f64) -> Prices {
    match provider {
        Provider::Anthropic => Prices::anthropic(input, output, input * 0.1),
        Provider::Openai | Provider::Google | Provider::Other => Prices::openai(input, output, input * 0.1),
    }
}
