//! Stream output targets (context.rst "Stream output targets"):
//! `create_stream_output_target`, `stream_output_target_destroy`,
//! `set_stream_output_targets`.
//!
//! A target is an entity holding an `Arc` of a
//! [`StreamOutputTarget`](ferropipe_components::draw::StreamOutputTarget):
//! a validated range of a buffer plus the *filled size* (Gallium's
//! "internal offset", llvmpipe's `draw_so_target::internal_offset`), which
//! the stream-output stage (`ferropipe_systems::stream_out`) advances as
//! it writes, in submission order.  Bindings and recorded draws hold their
//! own `Arc`s, so destroying a bound target changes nothing for them.
//!
//! Offsets given to `set_stream_output_targets` act at that point of the
//! command stream: if recorded draws capture, they are executed first, so
//! they see the offsets bound when they were recorded.

use std::sync::Arc;

use ferropipe_components::cso::StreamOutputTargetComponent;
use ferropipe_components::draw::StreamOutputTarget;
use ferropipe_components::enums::{BindFlags, TextureTarget};
use ferropipe_components::state::MAX_SO_BUFFERS;

use super::{Context, Handle};
use crate::error::{ResourceError, Result, StreamOutputError};
use crate::screen::Resource;

/// Handle to a stream output target.
pub type StreamOutputTargetHandle = Handle<StreamOutputTargetComponent>;

/// The offset `set_stream_output_targets` takes to mean "append": keep
/// writing where the previous capture into the target stopped (Gallium's
/// `(unsigned)-1`).
pub const SO_APPEND: u32 = u32::MAX;

impl Context {
    /// `create_stream_output_target`: the bytes from `buffer_offset`, for
    /// `buffer_size` bytes, of `resource`, a buffer created with
    /// `PIPE_BIND_STREAM_OUTPUT`.  The range must lie inside the buffer and
    /// start on a dword (stream output writes dwords).  Nothing is written
    /// yet (filled size 0).
    pub fn create_stream_output_target(
        &mut self,
        resource: &Resource,
        buffer_offset: u32,
        buffer_size: u32,
    ) -> Result<StreamOutputTargetHandle> {
        self.alive("create_stream_output_target")?;
        const CALL: &str = "create_stream_output_target";
        let t = resource.template();
        if t.target != TextureTarget::Buffer {
            return Err(ResourceError::NotABuffer {
                call: CALL,
                field: "resource",
                target: t.target,
            }
            .into());
        }
        if !t.bind.contains(BindFlags::STREAM_OUTPUT) {
            return Err(ResourceError::MissingBind {
                call: CALL,
                field: "resource",
                bind: "PIPE_BIND_STREAM_OUTPUT",
            }
            .into());
        }
        if !buffer_offset.is_multiple_of(4) {
            return Err(ResourceError::Misaligned {
                call: CALL,
                field: "buffer_offset",
                value: buffer_offset.into(),
                align: 4,
            }
            .into());
        }
        if buffer_offset as u64 + buffer_size as u64 > t.width0 as u64 {
            return Err(ResourceError::RangePastEnd {
                call: CALL,
                field: "buffer_size",
                offset: buffer_offset.into(),
                size: buffer_size.into(),
                buffer_size: t.width0.into(),
            }
            .into());
        }
        let target = StreamOutputTarget::new(resource.shared().clone(), buffer_offset, buffer_size);
        Ok(self.spawn(StreamOutputTargetComponent(Arc::new(target))))
    }

    /// `stream_output_target_destroy`: releases the target (a binding and
    /// recorded draws keep theirs).
    pub fn stream_output_target_destroy(&mut self, target: StreamOutputTargetHandle) -> Result<()> {
        self.alive("stream_output_target_destroy")?;
        self.despawn("stream_output_target_destroy", target)
    }

    /// `set_stream_output_targets`: binds `targets` to buffers `0..n`
    /// (`None` leaves a slot empty; the slots past `n` are unbound).
    /// `offsets[i]` sets target i's filled size (the byte offset, from its
    /// `buffer_offset`, where capture continues, and what a draw with
    /// `count_from_stream_output` counts); [`SO_APPEND`] keeps it, so
    /// capture appends to what the target already holds.
    ///
    /// At most `PIPE_MAX_SO_BUFFERS` (4) targets, one offset per target,
    /// offsets dword-aligned and inside the target, and no two bound
    /// targets overlapping in the same buffer (context.rst: "with a
    /// disjoint memory range").
    pub fn set_stream_output_targets(
        &mut self,
        targets: &[Option<StreamOutputTargetHandle>],
        offsets: &[u32],
    ) -> Result<()> {
        self.alive("set_stream_output_targets")?;
        const CALL: &str = "set_stream_output_targets";
        if targets.len() > MAX_SO_BUFFERS {
            return Err(StreamOutputError::TooManyTargets {
                count: targets.len(),
                limit: MAX_SO_BUFFERS,
            }
            .into());
        }
        if offsets.len() != targets.len() {
            return Err(StreamOutputError::OffsetCount {
                offsets: offsets.len(),
                targets: targets.len(),
            }
            .into());
        }
        let mut bound: [Option<Arc<StreamOutputTarget>>; MAX_SO_BUFFERS] =
            std::array::from_fn(|_| None);
        for (i, (h, &off)) in targets.iter().zip(offsets).enumerate() {
            let Some(h) = h else { continue };
            let t = self.get(CALL, "targets", *h)?.0.clone();
            if off != SO_APPEND && (!off.is_multiple_of(4) || off > t.buffer_size) {
                return Err(StreamOutputError::TargetOffset {
                    index: i,
                    offset: off,
                    size: t.buffer_size,
                }
                .into());
            }
            for (j, other) in bound.iter().enumerate().take(i) {
                let Some(o) = other else { continue };
                let same_buffer = Arc::ptr_eq(&o.buffer, &t.buffer);
                let (a0, a1) = (
                    t.buffer_offset as u64,
                    t.buffer_offset as u64 + t.buffer_size as u64,
                );
                let (b0, b1) = (
                    o.buffer_offset as u64,
                    o.buffer_offset as u64 + o.buffer_size as u64,
                );
                if same_buffer && a0 < b1 && b0 < a1 {
                    return Err(StreamOutputError::TargetsOverlap {
                        first: j,
                        second: i,
                    }
                    .into());
                }
            }
            bound[i] = Some(t);
        }
        self.record(super::CapturedCall::SetStreamOutputTargets {
            targets: &bound,
            offsets,
        });
        // Recorded draws that capture run with the offsets they were
        // recorded under.
        self.flush_captures()?;
        for (t, &off) in bound.iter().zip(offsets) {
            if let Some(t) = t
                && off != SO_APPEND
            {
                t.set_filled(off);
            }
        }
        self.bound_mut().so_targets = bound;
        Ok(())
    }

    /// Bytes written so far to a target (its filled size, after the
    /// recorded work executed): what a draw with
    /// `count_from_stream_output` divides by the vertex stride.
    pub fn stream_output_target_filled(&mut self, target: StreamOutputTargetHandle) -> Result<u32> {
        self.alive("stream_output_target_filled")?;
        const CALL: &str = "stream_output_target_filled";
        self.get(CALL, "target", target)?;
        self.flush_captures()?;
        Ok(self.get(CALL, "target", target)?.0.filled())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use crate::test_util::setup;
    use ferropipe_components::resource::ResourceTemplate;

    #[test]
    fn targets_are_validated() {
        let (s, mut c) = setup();
        let buf = s
            .resource_create(&ResourceTemplate::buffer(64, BindFlags::STREAM_OUTPUT))
            .unwrap();
        let vb = s
            .resource_create(&ResourceTemplate::buffer(64, BindFlags::VERTEX_BUFFER))
            .unwrap();
        let err = |r: Result<StreamOutputTargetHandle>| match r {
            Err(Error::Resource(e)) => e,
            other => panic!("expected a ResourceError, got {other:?}"),
        };
        assert_eq!(
            err(c.create_stream_output_target(&vb, 0, 16)),
            ResourceError::MissingBind {
                call: "create_stream_output_target",
                field: "resource",
                bind: "PIPE_BIND_STREAM_OUTPUT",
            }
        );
        assert!(matches!(
            err(c.create_stream_output_target(&buf, 2, 16)),
            ResourceError::Misaligned {
                value: 2,
                align: 4,
                ..
            }
        ));
        assert!(matches!(
            err(c.create_stream_output_target(&buf, 32, 33)),
            ResourceError::RangePastEnd {
                offset: 32,
                size: 33,
                buffer_size: 64,
                ..
            }
        ));
        let a = c.create_stream_output_target(&buf, 0, 32).unwrap();
        let b = c.create_stream_output_target(&buf, 32, 32).unwrap();
        let overlap = c.create_stream_output_target(&buf, 16, 32).unwrap();
        c.set_stream_output_targets(&[Some(a), Some(b)], &[0, 8])
            .unwrap();
        assert_eq!(c.stream_output_target_filled(b).unwrap(), 8);
        let bad = |c: &mut Context, t: &[Option<StreamOutputTargetHandle>], o: &[u32]| match c
            .set_stream_output_targets(t, o)
        {
            Err(Error::StreamOutput(e)) => e,
            other => panic!("expected a StreamOutputError, got {other:?}"),
        };
        assert_eq!(
            bad(&mut c, &[Some(a), Some(overlap)], &[0, 0]),
            StreamOutputError::TargetsOverlap {
                first: 0,
                second: 1
            }
        );
        assert_eq!(
            bad(&mut c, &[Some(a)], &[0, 0]),
            StreamOutputError::OffsetCount {
                offsets: 2,
                targets: 1
            }
        );
        for off in [6, 36] {
            assert_eq!(
                bad(&mut c, &[Some(a)], &[off]),
                StreamOutputError::TargetOffset {
                    index: 0,
                    offset: off,
                    size: 32
                }
            );
        }
        assert_eq!(
            bad(&mut c, &[None, None, None, None, None], &[0; 5]),
            StreamOutputError::TooManyTargets { count: 5, limit: 4 }
        );
        // Append keeps the filled size; an explicit offset sets it.
        c.set_stream_output_targets(&[None, Some(b)], &[0, SO_APPEND])
            .unwrap();
        assert_eq!(c.stream_output_target_filled(b).unwrap(), 8);
        c.set_stream_output_targets(&[Some(b)], &[4]).unwrap();
        assert_eq!(c.stream_output_target_filled(b).unwrap(), 4);
        // Destroying a bound target leaves the binding intact.
        c.stream_output_target_destroy(b).unwrap();
        assert!(c.bound().so_targets[0].is_some());
        assert!(matches!(
            c.stream_output_target_filled(b),
            Err(Error::InvalidHandle { .. })
        ));
        c.set_stream_output_targets(&[], &[]).unwrap();
        assert!(c.bound().so_targets.iter().all(Option::is_none));
    }
}
