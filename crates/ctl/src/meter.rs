//! Meter syntax (`ovs-ofctl add-meter`):
//!
//! ```text
//! meter=1,kbps,burst,stats,band=type=drop,rate=1000,burst_size=100
//! ```
//!
//! Flags are the bare keywords `kbps`, `pktps`, `burst`, `stats`. `band=` (or
//! `bands=`) starts the band list; each `type=` starts a new band, followed
//! by `rate=`, `burst_size=` and, for `dscp_remark`, `prec_level=`.

use ofp::meter::{command, flags, meter_id, MeterBand, MeterMod};

use crate::fields::parse_int;
use crate::lex::{split_token, tokenize, Token};
use crate::syntax_error::SyntaxError;

/// What a meter string is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeterUsage {
    /// add-meter / mod-meter: `meter=` and at least a rate unit.
    Add,
    /// del-meters / dump-meters / meter-stats: only `meter=`, default all.
    Select,
}

const FLAGS: &[(&str, u16)] = &[
    ("kbps", flags::KBPS),
    ("pktps", flags::PKTPS),
    ("burst", flags::BURST),
    ("stats", flags::STATS),
];

fn parse_meter_id(t: &Token<'_>) -> Result<u32, SyntaxError> {
    let v = t.need_value()?;
    match v.to_ascii_lowercase().as_str() {
        "all" => Ok(meter_id::ALL),
        "controller" => Ok(meter_id::CONTROLLER),
        "slowpath" => Ok(meter_id::SLOWPATH),
        _ => parse_int(v)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| t.value_err(format!("bad meter id \"{v}\""))),
    }
}

/// A band being parsed: type from `type=`, then its numbers.
struct BandBuilder {
    ty: u16,
    rate: u32,
    burst_size: u32,
    prec_level: u8,
}

impl BandBuilder {
    fn build(&self) -> MeterBand {
        match self.ty {
            ofp::meter::band_type::DSCP_REMARK => MeterBand::DscpRemark {
                rate: self.rate,
                burst_size: self.burst_size,
                prec_level: self.prec_level,
            },
            _ => MeterBand::Drop {
                rate: self.rate,
                burst_size: self.burst_size,
            },
        }
    }
}

fn band_token(t: &Token<'_>, bands: &mut Vec<BandBuilder>) -> Result<(), SyntaxError> {
    let num = |t: &Token<'_>| -> Result<u32, SyntaxError> {
        let v = t.need_value()?;
        parse_int(v)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| t.value_err(format!("bad number \"{v}\"")))
    };
    if t.key == "type" {
        let v = t.need_value()?;
        let ty = match v {
            "drop" => ofp::meter::band_type::DROP,
            "dscp_remark" => ofp::meter::band_type::DSCP_REMARK,
            _ => return Err(t.value_err(format!("unknown band type \"{v}\""))),
        };
        bands.push(BandBuilder {
            ty,
            rate: 0,
            burst_size: 0,
            prec_level: 0,
        });
        return Ok(());
    }
    let Some(b) = bands.last_mut() else {
        return Err(t.key_err("a band starts with type="));
    };
    match t.key {
        "rate" => b.rate = num(t)?,
        "burst_size" => b.burst_size = num(t)?,
        "prec_level" => {
            b.prec_level = u8::try_from(num(t)?).map_err(|_| t.value_err("prec_level above 255"))?
        }
        _ => return Err(t.key_err(format!("unknown band keyword \"{}\"", t.key))),
    }
    Ok(())
}

/// Parse a meter string into a METER_MOD with command ADD (or DELETE for
/// [`MeterUsage::Select`]).
pub fn parse_meter(s: &str, usage: MeterUsage) -> Result<MeterMod, SyntaxError> {
    let mut id = None;
    let mut fl = 0u16;
    let mut bands: Vec<BandBuilder> = Vec::new();
    let mut in_bands = false;
    for t in tokenize(s, 0)? {
        if in_bands {
            band_token(&t, &mut bands)?;
            continue;
        }
        if let Some((_, bit)) = FLAGS.iter().find(|(n, _)| *n == t.key && t.value.is_none()) {
            fl |= bit;
            continue;
        }
        match t.key {
            "meter" | "meter_id" => id = Some(parse_meter_id(&t)?),
            "band" | "bands" if usage == MeterUsage::Add => {
                in_bands = true;
                if let Some(v) = t.value.filter(|v| !v.is_empty()) {
                    band_token(&split_token(v, t.value_at), &mut bands)?;
                }
            }
            _ => return Err(t.key_err(format!("unknown meter keyword \"{}\"", t.key))),
        }
    }
    let meter_id = match (id, usage) {
        (Some(i), _) => i,
        (None, MeterUsage::Select) => meter_id::ALL,
        (None, MeterUsage::Add) => {
            return Err(SyntaxError::new("must specify meter=ID", s.len(), 0))
        }
    };
    if usage == MeterUsage::Add && fl & (flags::KBPS | flags::PKTPS) == 0 {
        fl |= flags::KBPS;
    }
    Ok(MeterMod {
        command: if usage == MeterUsage::Add {
            command::ADD
        } else {
            command::DELETE
        },
        flags: fl,
        meter_id,
        bands: bands.iter().map(BandBuilder::build).collect(),
    })
}

/// Print one band (`type=drop rate=1000 burst_size=100`).
pub fn format_band(b: &MeterBand) -> String {
    match b {
        MeterBand::Drop { rate, burst_size } => {
            format!("type=drop rate={rate} burst_size={burst_size}")
        }
        MeterBand::DscpRemark {
            rate,
            burst_size,
            prec_level,
        } => {
            format!("type=dscp_remark rate={rate} burst_size={burst_size} prec_level={prec_level}")
        }
        MeterBand::Experimenter {
            rate,
            burst_size,
            experimenter,
            ..
        } => format!(
            "type=experimenter rate={rate} burst_size={burst_size} experimenter={experimenter:#x}"
        ),
    }
}

/// Print a meter as ovs-ofctl's dump-meters does, on one line
/// (`meter=1 kbps burst stats bands=type=drop rate=1000 burst_size=100`).
pub fn format_meter(id: u32, fl: u16, bands: &[MeterBand]) -> String {
    let mut s = format!("meter={id}");
    for (name, bit) in FLAGS {
        if fl & bit != 0 {
            s += " ";
            s += name;
        }
    }
    s += " bands=";
    s += &bands.iter().map(format_band).collect::<Vec<_>>().join(" ");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_print() {
        let m = parse_meter(
            "meter=1,kbps,burst,band=type=drop,rate=1000,burst_size=100,type=dscp_remark,rate=5,prec_level=1",
            MeterUsage::Add,
        )
        .unwrap();
        assert_eq!(m.meter_id, 1);
        assert_eq!(m.flags, flags::KBPS | flags::BURST);
        assert_eq!(
            m.bands,
            vec![
                MeterBand::Drop {
                    rate: 1000,
                    burst_size: 100
                },
                MeterBand::DscpRemark {
                    rate: 5,
                    burst_size: 0,
                    prec_level: 1
                }
            ]
        );
        let p = format_meter(m.meter_id, m.flags, &m.bands);
        assert_eq!(
            p,
            "meter=1 kbps burst bands=type=drop rate=1000 burst_size=100 type=dscp_remark rate=5 burst_size=0 prec_level=1"
        );
        assert_eq!(parse_meter(&p, MeterUsage::Add).unwrap(), m);
    }

    #[test]
    fn select_and_errors() {
        assert_eq!(
            parse_meter("", MeterUsage::Select).unwrap().meter_id,
            meter_id::ALL
        );
        assert_eq!(
            parse_meter("meter=3", MeterUsage::Select).unwrap().meter_id,
            3
        );
        let e = parse_meter("meter=1,kbps,band=type=drop,rte=1", MeterUsage::Add).unwrap_err();
        assert_eq!(e.offset, 28);
        let e = parse_meter("meter=1,kbs", MeterUsage::Add).unwrap_err();
        assert_eq!(e.offset, 8);
        let e = parse_meter("meter=1,band=type=foo", MeterUsage::Add).unwrap_err();
        assert_eq!(e.offset, 18);
    }
}
