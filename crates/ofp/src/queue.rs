//! Queues (spec §7.2.2 and §7.3.6): `ofp_packet_queue` with its properties,
//! and the OFPT_QUEUE_GET_CONFIG_REQUEST / REPLY bodies.
//!
//! A packet queue is a record whose `len` covers its 16-byte header and a list
//! of property TLVs; each property has an 8-byte header (`property`, `len`,
//! 4 pad) followed by its body.

use crate::error::{DecodeError, ErrorCode, QueueOpFailedCode};
use crate::port::port_no;
use crate::wire::{Reader, Writer};

/// `ofp_queue_properties`.
pub mod prop_type {
    pub const MIN_RATE: u16 = 1;
    pub const MAX_RATE: u16 = 2;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// Rate values above this mean "disabled" (`OFPQ_MIN_RATE_UNCFG`).
pub const RATE_UNCFG: u16 = 0xffff;
/// Size of `ofp_packet_queue` without properties.
pub const PACKET_QUEUE_LEN: usize = 16;
/// Size of the min/max rate properties and of the experimenter property's
/// fixed part.
pub const PROP_LEN: usize = 16;

/// One queue property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueProp {
    /// Guaranteed minimum rate, in 1/10 of a percent of the port speed.
    MinRate(u16),
    /// Maximum rate, in 1/10 of a percent of the port speed.
    MaxRate(u16),
    /// Experimenter property. Encode pads `data` with zeros to a multiple of 8.
    Experimenter { experimenter: u32, data: Vec<u8> },
    /// A property type this codec does not know, kept raw (body after the
    /// 8-byte property header) so replies from other switches still decode.
    Other { property: u16, data: Vec<u8> },
}

impl QueueProp {
    /// Decode one property. Replies are what carry properties, so a malformed
    /// one is BAD_REQUEST/BAD_LEN (the reader's length error).
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let property = r.peek_u16("queue prop: property")?;
        let len = r.peek_u16_at(2, "queue prop: len")? as usize;
        if len < 8 || !len.is_multiple_of(8) {
            return Err(r.short("queue prop: len"));
        }
        let mut p = r.sub(len, "queue prop")?;
        p.pad(8)?;
        Ok(match property {
            prop_type::MIN_RATE | prop_type::MAX_RATE => {
                let rate = p.u16("queue prop: rate")?;
                p.pad(6)?;
                p.finish("queue prop: rate len")?;
                if property == prop_type::MIN_RATE {
                    QueueProp::MinRate(rate)
                } else {
                    QueueProp::MaxRate(rate)
                }
            }
            prop_type::EXPERIMENTER => {
                let experimenter = p.u32("queue prop: experimenter")?;
                p.pad(4)?;
                QueueProp::Experimenter {
                    experimenter,
                    data: p.rest().to_vec(),
                }
            }
            _ => QueueProp::Other {
                property,
                data: p.rest().to_vec(),
            },
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        let property = match self {
            QueueProp::MinRate(_) => prop_type::MIN_RATE,
            QueueProp::MaxRate(_) => prop_type::MAX_RATE,
            QueueProp::Experimenter { .. } => prop_type::EXPERIMENTER,
            QueueProp::Other { property, .. } => *property,
        };
        w.put_u16(property);
        w.put_u16(0);
        w.put_zeros(4);
        match self {
            QueueProp::MinRate(rate) | QueueProp::MaxRate(rate) => {
                w.put_u16(*rate);
                w.put_zeros(6);
            }
            QueueProp::Experimenter { experimenter, data } => {
                w.put_u32(*experimenter);
                w.put_zeros(4);
                w.put_bytes(data);
            }
            QueueProp::Other { data, .. } => w.put_bytes(data),
        }
        w.pad_to_8(start);
        let len = (w.len() - start) as u16;
        w.patch_u16(start + 2, len);
    }
}

/// `ofp_packet_queue`: one queue of a port and its properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PacketQueue {
    pub queue_id: u32,
    /// Port this queue is attached to.
    pub port: u32,
    pub properties: Vec<QueueProp>,
}

impl PacketQueue {
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let len = r.peek_u16_at(8, "packet queue: len")? as usize;
        if len < PACKET_QUEUE_LEN {
            return Err(r.short("packet queue: len below 16"));
        }
        let mut q = r.sub(len, "packet queue")?;
        let queue_id = q.u32("packet queue: queue_id")?;
        let port = q.u32("packet queue: port")?;
        q.pad(8)?; // len (already read) and 6 bytes of padding
        let mut properties = Vec::new();
        while !q.is_empty() {
            properties.push(QueueProp::decode(&mut q)?);
        }
        Ok(PacketQueue {
            queue_id,
            port,
            properties,
        })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        let start = w.len();
        w.put_u32(self.queue_id);
        w.put_u32(self.port);
        w.put_u16(0);
        w.put_zeros(6);
        for p in &self.properties {
            p.encode(w);
        }
        let len = (w.len() - start) as u16;
        w.patch_u16(start + 8, len);
    }
}

/// OFPT_QUEUE_GET_CONFIG_REQUEST body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueGetConfigRequest {
    /// A port number (1..=OFPP_MAX) or OFPP_ANY for every port.
    pub port: u32,
}

impl QueueGetConfigRequest {
    /// Decode the bytes after `ofp_header` (length checked by the caller).
    /// A port that can never have queues (0, or a reserved number other than
    /// OFPP_ANY) is QUEUE_OP_FAILED/BAD_PORT (spec §7.3.6: "should refer to a
    /// valid physical port (i.e. <= OFPP_MAX), or OFPP_ANY").
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let port = r.u32("queue_get_config_request: port")?;
        r.pad(4)?;
        if port == 0 || (port > port_no::MAX && port != port_no::ANY) {
            return Err(DecodeError::new(
                ErrorCode::QueueOpFailed(QueueOpFailedCode::BadPort),
                "queue_get_config_request: port",
            ));
        }
        Ok(QueueGetConfigRequest { port })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port);
        w.put_zeros(4);
    }
}

/// OFPT_QUEUE_GET_CONFIG_REPLY body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueGetConfigReply {
    pub port: u32,
    pub queues: Vec<PacketQueue>,
}

impl QueueGetConfigReply {
    /// Decode the bytes after `ofp_header`; queues run to the end of `r`.
    pub fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let port = r.u32("queue_get_config_reply: port")?;
        r.pad(4)?;
        let mut queues = Vec::new();
        while !r.is_empty() {
            queues.push(PacketQueue::decode(r)?);
        }
        Ok(QueueGetConfigReply { port, queues })
    }

    pub fn encode(&self, w: &mut Vec<u8>) {
        w.put_u32(self.port);
        w.put_zeros(4);
        for q in &self.queues {
            q.encode(w);
        }
    }
}

#[cfg(test)]
pub(crate) mod arb {
    use super::*;
    use proptest::prelude::*;

    fn data8() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(any::<[u8; 8]>(), 0..3).prop_map(|v| v.concat())
    }

    pub fn any_prop() -> impl Strategy<Value = QueueProp> {
        prop_oneof![
            any::<u16>().prop_map(QueueProp::MinRate),
            any::<u16>().prop_map(QueueProp::MaxRate),
            (any::<u32>(), data8())
                .prop_map(|(experimenter, data)| QueueProp::Experimenter { experimenter, data }),
            (3u16..0xfff0, data8())
                .prop_map(|(property, data)| QueueProp::Other { property, data }),
        ]
    }

    pub fn any_queue() -> impl Strategy<Value = PacketQueue> {
        (
            any::<u32>(),
            any::<u32>(),
            prop::collection::vec(any_prop(), 0..4),
        )
            .prop_map(|(queue_id, port, properties)| PacketQueue {
                queue_id,
                port,
                properties,
            })
    }

    pub fn any_reply() -> impl Strategy<Value = QueueGetConfigReply> {
        (any::<u32>(), prop::collection::vec(any_queue(), 0..3))
            .prop_map(|(port, queues)| QueueGetConfigReply { port, queues })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::BadRequestCode;
    use proptest::prelude::*;

    #[test]
    fn reply_bytes() {
        let rep = QueueGetConfigReply {
            port: 1,
            queues: vec![PacketQueue {
                queue_id: 2,
                port: 1,
                properties: vec![
                    QueueProp::MinRate(100),
                    QueueProp::Experimenter {
                        experimenter: 0x2320,
                        data: vec![],
                    },
                ],
            }],
        };
        let mut w = Vec::new();
        rep.encode(&mut w);
        #[rustfmt::skip]
        let want = [
            0, 0, 0, 1, 0, 0, 0, 0,
            0, 0, 0, 2, 0, 0, 0, 1, 0, 48, 0, 0, 0, 0, 0, 0,
            0, 1, 0, 16, 0, 0, 0, 0, 0, 100, 0, 0, 0, 0, 0, 0,
            0xff, 0xff, 0, 16, 0, 0, 0, 0, 0, 0, 0x23, 0x20, 0, 0, 0, 0,
        ];
        assert_eq!(w, want);
        assert_eq!(
            QueueGetConfigReply::decode(&mut Reader::message(&w)).unwrap(),
            rep
        );
    }

    #[test]
    fn request_bad_port() {
        for port in [0u32, 0xffff_fffe, 0xffff_ff01] {
            let mut w = Vec::new();
            QueueGetConfigRequest { port }.encode(&mut w);
            let e = QueueGetConfigRequest::decode(&mut Reader::message(&w)).unwrap_err();
            assert_eq!(e.code, ErrorCode::QueueOpFailed(QueueOpFailedCode::BadPort));
        }
        let mut w = Vec::new();
        QueueGetConfigRequest { port: port_no::ANY }.encode(&mut w);
        assert!(QueueGetConfigRequest::decode(&mut Reader::message(&w)).is_ok());
    }

    #[test]
    fn bad_lengths() {
        let bl = ErrorCode::BadRequest(BadRequestCode::BadLen);
        // queue len 8 < 16
        let mut b = vec![0u8, 0, 0, 1, 0, 0, 0, 0];
        b.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0]);
        let e = QueueGetConfigReply::decode(&mut Reader::message(&b)).unwrap_err();
        assert_eq!(e.code, bl);
        // queue len 24 with an 8-byte min-rate property that claims 16
        b[17] = 24;
        b.extend_from_slice(&[0, 1, 0, 16, 0, 0, 0, 0]);
        let e = QueueGetConfigReply::decode(&mut Reader::message(&b)).unwrap_err();
        assert_eq!(e.code, bl);
    }

    proptest! {
        #[test]
        fn reply_round_trip(rep in arb::any_reply()) {
            let mut w = Vec::new();
            rep.encode(&mut w);
            prop_assert_eq!(QueueGetConfigReply::decode(&mut Reader::message(&w)).unwrap(), rep);
        }

        #[test]
        fn reply_never_panics(b in prop::collection::vec(any::<u8>(), 0..80)) {
            let _ = QueueGetConfigReply::decode(&mut Reader::message(&b));
        }
    }
}
