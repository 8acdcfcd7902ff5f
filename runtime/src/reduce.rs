//! Reductions on arrays and array sections (`reduction(+: hist[0:n])`) around a
//! kernel launch.
//!
//! OpenMP gives the region a private copy of the reduced elements that starts at the
//! operator's identity and, at the end, makes every element `original op private`
//! (OpenMP 5.2, 5.5.8). The kernel updates the array in place in the loop's order, so
//! the runtime makes its device copy the private one: [`begin`] saves the reduced
//! elements' device values and sets them to the identity, the kernel runs, [`end`]
//! combines the saved values with the kernel's. With one thread the host does exactly
//! this (its private copy accumulates in the loop's order), so the result is the
//! host's bit for bit; for every operator but floating `+` and `*` it is the host's
//! with any number of threads.
//!
//! Identities and combiners are clang's (those of the scalar reductions in the
//! kernels, `tessera_hls::baseline`): the largest finite value, not infinity, for
//! floating `min`; `o < p ? o : p` for `min`; `(T)(o + p)` for narrow integer types.

use crate::data::BoxShape;
use crate::device::{DeviceBuffer, KernelArg};
use std::ops::Range;
use tessera_ir::{ReductionOp, ScalarType};

/// An evaluated array reduction: which elements of the argument, with which operator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    /// The reduction identifier.
    pub op: ReductionOp,
    /// The element type.
    pub elem: ScalarType,
    /// The array's shape with the reduced elements as its box.
    pub shape: BoxShape,
}

impl ReducePlan {
    /// The byte ranges of the reduced elements in a buffer whose element 0 is at
    /// `offset`, checked against the buffer's length.
    fn ranges(&self, offset: usize, buffer_len: usize) -> Result<Vec<Range<usize>>, String> {
        let mut out = Vec::new();
        self.shape.for_each_run(|off, len| out.push(offset + off..offset + off + len));
        match out.last() {
            Some(r) if r.end > buffer_len => Err(format!(
                "the reduced elements end at byte {} but the device buffer holds {buffer_len}",
                r.end
            )),
            _ => Ok(out),
        }
    }
}

/// `$bool` for `_Bool`, else `$int!(T)` or `$float!(T)` with the Rust type `T` of the
/// scalar type `$ty`.
macro_rules! by_type {
    ($ty:expr, $bool:expr, $int:ident, $float:ident) => {
        match $ty {
            ScalarType::Bool => $bool,
            ScalarType::I8 => $int!(i8),
            ScalarType::U8 => $int!(u8),
            ScalarType::I16 => $int!(i16),
            ScalarType::U16 => $int!(u16),
            ScalarType::I32 => $int!(i32),
            ScalarType::U32 => $int!(u32),
            ScalarType::I64 => $int!(i64),
            ScalarType::U64 => $int!(u64),
            ScalarType::F32 => $float!(f32),
            ScalarType::F64 => $float!(f64),
        }
    };
}

/// The identity of `op` for `ty`, as the bytes of one element.
pub fn identity(op: ReductionOp, ty: ScalarType) -> Vec<u8> {
    use ReductionOp::*;
    macro_rules! int {
        ($t:ty) => {
            match op {
                Add | BitOr | BitXor | LOr => (0 as $t).to_ne_bytes().to_vec(),
                Mul | LAnd => (1 as $t).to_ne_bytes().to_vec(),
                BitAnd => (!0 as $t).to_ne_bytes().to_vec(),
                Min => <$t>::MAX.to_ne_bytes().to_vec(),
                Max => <$t>::MIN.to_ne_bytes().to_vec(),
            }
        };
    }
    macro_rules! float {
        ($t:ty) => {
            match op {
                Add | BitOr | BitXor | LOr => (0.0 as $t).to_ne_bytes().to_vec(),
                Mul | LAnd | BitAnd => (1.0 as $t).to_ne_bytes().to_vec(),
                Min => <$t>::MAX.to_ne_bytes().to_vec(),
                Max => (-<$t>::MAX).to_ne_bytes().to_vec(),
            }
        };
    }
    // `_Bool`: the identities converted to it (`~0`, the largest value → 1).
    by_type!(ty, vec![u8::from(matches!(op, Mul | LAnd | BitAnd | Min))], int, float)
}

/// clang's `min` / `max` combiner: `o < p ? o : p` / `o > p ? o : p` (with a NaN the
/// comparison is false and `p` wins).
fn pick<T: PartialOrd>(op: ReductionOp, o: T, p: T) -> T {
    let first = if op == ReductionOp::Min { o < p } else { o > p };
    if first {
        o
    } else {
        p
    }
}

/// `private[k] = orig[k] op private[k]` for every element of the two byte slices
/// (equal lengths, whole elements of `ty`), with clang's combiner.
pub fn combine(op: ReductionOp, ty: ScalarType, orig: &[u8], private: &mut [u8]) {
    use ReductionOp::*;
    macro_rules! each {
        ($t:ty, $f:expr) => {{
            const N: usize = std::mem::size_of::<$t>();
            for (o, p) in orig.chunks_exact(N).zip(private.chunks_exact_mut(N)) {
                let a = <$t>::from_ne_bytes(o.try_into().expect("whole elements"));
                let b = <$t>::from_ne_bytes((&*p).try_into().expect("whole elements"));
                let r: $t = $f(a, b);
                p.copy_from_slice(&r.to_ne_bytes());
            }
        }};
    }
    macro_rules! int {
        ($t:ty) => {
            each!($t, |a: $t, b: $t| -> $t {
                match op {
                    // C computes in int and converts back: modulo 2^bits.
                    Add => a.wrapping_add(b),
                    Mul => a.wrapping_mul(b),
                    BitAnd => a & b,
                    BitOr => a | b,
                    BitXor => a ^ b,
                    LAnd => (a != 0 && b != 0) as $t,
                    LOr => (a != 0 || b != 0) as $t,
                    Min | Max => pick(op, a, b),
                }
            })
        };
    }
    macro_rules! float {
        ($t:ty) => {
            each!($t, |a: $t, b: $t| -> $t {
                match op {
                    Add => a + b,
                    Mul => a * b,
                    // Not valid C for floating types (clang rejects the clause).
                    BitAnd | BitOr | BitXor => unreachable!("bitwise reduction on a floating type"),
                    LAnd => ((a != 0.0 && b != 0.0) as u8).into(),
                    LOr => ((a != 0.0 || b != 0.0) as u8).into(),
                    Min | Max => pick(op, a, b),
                }
            })
        };
    }
    // `_Bool`: `(_Bool)(o op p)`, any nonzero result is 1.
    by_type!(
        ty,
        {
            int!(u8);
            private.iter_mut().for_each(|b| *b = u8::from(*b != 0));
        },
        int,
        float
    )
}

/// The reduced elements' values before the kernel ran, from [`begin`].
#[derive(Debug)]
pub struct Saved {
    ranges: Vec<Range<usize>>,
    bytes: Vec<u8>,
}

/// Before the launch: saves the reduced elements of `buf` (element 0 at byte
/// `offset`) and sets them to the identity, on the device.
pub fn begin<B: DeviceBuffer + ?Sized>(buf: &mut B, offset: usize, r: &ReducePlan) -> Result<Saved, String> {
    let ranges = r.ranges(offset, buf.host_view().len())?;
    let id = identity(r.op, r.elem);
    let mut bytes = Vec::with_capacity(r.shape.box_bytes());
    for range in &ranges {
        buf.sync_from_device(range.clone())?;
        let view = &mut buf.host_view()[range.clone()];
        bytes.extend_from_slice(view);
        for e in view.chunks_exact_mut(id.len()) {
            e.copy_from_slice(&id);
        }
        buf.sync_to_device(range.clone())?;
    }
    Ok(Saved { ranges, bytes })
}

/// After the launch: every reduced element becomes `saved op kernel's value`, on the
/// device.
pub fn end<B: DeviceBuffer + ?Sized>(buf: &mut B, r: &ReducePlan, saved: &Saved) -> Result<(), String> {
    let mut at = 0;
    for range in &saved.ranges {
        buf.sync_from_device(range.clone())?;
        let n = range.len();
        combine(r.op, r.elem, &saved.bytes[at..at + n], &mut buf.host_view()[range.clone()]);
        buf.sync_to_device(range.clone())?;
        at += n;
    }
    Ok(())
}

/// After a failed launch: the reduced elements get back the values [`begin`] saved,
/// so a host run that follows sees the data as it was.
pub fn restore<B: DeviceBuffer + ?Sized>(buf: &mut B, saved: &Saved) -> Result<(), String> {
    let mut at = 0;
    for range in &saved.ranges {
        let n = range.len();
        buf.host_view()[range.clone()].copy_from_slice(&saved.bytes[at..at + n]);
        buf.sync_to_device(range.clone())?;
        at += n;
    }
    Ok(())
}

/// Runs `launch` with the reduced elements of every array argument with a reduction
/// (`reductions[i]` for `kargs[i]`, named `name(i)` in errors) as OpenMP's private
/// copy: [`begin`] before it, [`end`] after it; when either fails or the launch does,
/// [`restore`] puts back the elements' values, so the host run that follows sees the
/// data as it was.
pub fn around<'a, B: DeviceBuffer, T>(
    kargs: &mut [KernelArg<'a, B>],
    reductions: &[Option<ReducePlan>],
    name: impl Fn(usize) -> String,
    launch: impl FnOnce(&mut [KernelArg<'a, B>]) -> Result<T, String>,
) -> Result<T, String> {
    fn buffer<'k, B>(k: &'k mut KernelArg<'_, B>) -> Option<(&'k mut B, usize)> {
        match k {
            KernelArg::Array { buffer, offset, .. } => Some((&mut **buffer, *offset)),
            KernelArg::Scalar(_) => None,
        }
    }
    let mut saves = Vec::new();
    let mut result = Ok(());
    for (i, r) in reductions.iter().enumerate() {
        let (Some(r), Some((b, offset))) = (r, kargs.get_mut(i).and_then(buffer)) else { continue };
        match begin(b, offset, r) {
            Ok(saved) => saves.push((i, r, saved)),
            Err(e) => {
                result = Err(format!("array '{}': {e}", name(i)));
                break;
            }
        }
    }
    let mut result = result.and_then(|()| launch(kargs));
    if result.is_ok() {
        for (i, r, saved) in &saves {
            let (b, _) = buffer(&mut kargs[*i]).expect("saved from an array");
            if let Err(e) = end(b, r, saved) {
                result = Err(format!("array '{}': combining the reduction failed: {e}", name(*i)));
                break;
            }
        }
    }
    if let Err(e) = &mut result {
        for (i, _, saved) in &saves {
            let (b, _) = buffer(&mut kargs[*i]).expect("saved from an array");
            if let Err(r) = restore(b, saved) {
                e.push_str(&format!("; restoring the reduced elements of '{}' failed: {r}", name(*i)));
            }
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer whose view is its memory (as on the emulated device).
    struct Mem(Vec<u8>);
    impl DeviceBuffer for Mem {
        fn host_view(&mut self) -> &mut [u8] {
            &mut self.0
        }
        fn sync_to_device(&mut self, range: Range<usize>) -> Result<(), String> {
            assert!(range.end <= self.0.len());
            Ok(())
        }
        fn sync_from_device(&mut self, range: Range<usize>) -> Result<(), String> {
            assert!(range.end <= self.0.len());
            Ok(())
        }
    }

    fn bytes_i32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }
    fn i32s(b: &[u8]) -> Vec<i32> {
        b.chunks_exact(4).map(|c| i32::from_ne_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn identities_are_clangs() {
        assert_eq!(identity(ReductionOp::Add, ScalarType::I32), 0i32.to_ne_bytes());
        assert_eq!(identity(ReductionOp::BitAnd, ScalarType::U16), [0xff, 0xff]);
        assert_eq!(identity(ReductionOp::Min, ScalarType::I8), [0x7f]);
        assert_eq!(identity(ReductionOp::Max, ScalarType::U64), 0u64.to_ne_bytes());
        assert_eq!(identity(ReductionOp::Min, ScalarType::F32), f32::MAX.to_ne_bytes());
        assert_eq!(identity(ReductionOp::Max, ScalarType::F64), (-f64::MAX).to_ne_bytes());
        assert_eq!(identity(ReductionOp::Mul, ScalarType::F64), 1.0f64.to_ne_bytes());
        assert_eq!(identity(ReductionOp::LAnd, ScalarType::Bool), [1]);
        assert_eq!(identity(ReductionOp::Max, ScalarType::Bool), [0]);
    }

    #[test]
    fn combiners_wrap_and_order_like_c() {
        let mut p = vec![100u8 as i8 as u8, 3];
        combine(ReductionOp::Add, ScalarType::I8, &[100, 200], &mut p);
        // (signed char)(100 + 100) = -56; (signed char)(-56 + 3) = -53.
        assert_eq!(p, [(-56i8) as u8, (-53i8) as u8]);
        let mut p = bytes_i32(&[5, -7, 0]);
        combine(ReductionOp::Min, ScalarType::I32, &bytes_i32(&[3, 2, 0]), &mut p);
        assert_eq!(i32s(&p), [3, -7, 0]);
        let mut p = vec![1, 1, 0];
        combine(ReductionOp::Add, ScalarType::Bool, &[1, 0, 0], &mut p);
        assert_eq!(p, [1, 1, 0]);
        let mut p = vec![1, 1];
        combine(ReductionOp::BitXor, ScalarType::Bool, &[1, 0], &mut p);
        assert_eq!(p, [0, 1]);
        // Floating: one rounding per combine, in f32.
        let mut p = (1.0e-8f32).to_ne_bytes().to_vec();
        combine(ReductionOp::Add, ScalarType::F32, &1.0f32.to_ne_bytes(), &mut p);
        assert_eq!(p, (1.0f32 + 1.0e-8f32).to_ne_bytes());
        // `o < p ? o : p`: a NaN private value wins over a number, as in C.
        let mut p = f64::NAN.to_ne_bytes().to_vec();
        combine(ReductionOp::Min, ScalarType::F64, &2.0f64.to_ne_bytes(), &mut p);
        assert!(f64::from_ne_bytes(p.try_into().unwrap()).is_nan());
        let mut p = 0.0f32.to_ne_bytes().to_vec();
        combine(ReductionOp::LOr, ScalarType::F32, &f32::NAN.to_ne_bytes(), &mut p);
        assert_eq!(p, 1.0f32.to_ne_bytes());
    }

    /// `int a[4][5]` with `reduction(+: a[1:2][1:3])`, element 0 at byte 8 of the buffer:
    /// the six reduced elements start at the identity, the kernel adds to them, and the
    /// result is original + kernel's sum; the other elements are untouched.
    #[test]
    fn begin_and_end_make_the_device_copy_private() {
        let orig: Vec<i32> = (0..20).map(|k| 100 * k).collect();
        let mut buf = Mem([vec![0xaa; 8], bytes_i32(&orig)].concat());
        let shape = BoxShape { elem_size: 4, dims: vec![4, 5], lower: vec![1, 1], len: vec![2, 3] };
        let r = ReducePlan { op: ReductionOp::Add, elem: ScalarType::I32, shape };
        let saved = begin(&mut buf, 8, &r).unwrap();
        let seen = i32s(&buf.0[8..]);
        let reduced = [6, 7, 8, 11, 12, 13];
        for k in 0..20 {
            assert_eq!(seen[k], if reduced.contains(&k) { 0 } else { orig[k] }, "element {k}");
        }
        // The "kernel": each reduced element gets k + 1.
        for &k in &reduced {
            buf.0[8 + 4 * k..12 + 4 * k].copy_from_slice(&(k as i32 + 1).to_ne_bytes());
        }
        end(&mut buf, &r, &saved).unwrap();
        let got = i32s(&buf.0[8..]);
        for k in 0..20 {
            let want = if reduced.contains(&k) { orig[k] + k as i32 + 1 } else { orig[k] };
            assert_eq!(got[k], want, "element {k}");
        }
        assert_eq!(buf.0[..8], [0xaa; 8]);
        // A failed launch puts the saved values back.
        let saved = begin(&mut buf, 8, &r).unwrap();
        restore(&mut buf, &saved).unwrap();
        assert_eq!(i32s(&buf.0[8..]), got);
    }

    #[test]
    fn reduced_elements_beyond_the_buffer_are_refused() {
        let mut buf = Mem(vec![0; 16]);
        let shape = BoxShape { elem_size: 4, dims: vec![8], lower: vec![2], len: vec![4] };
        let r = ReducePlan { op: ReductionOp::Add, elem: ScalarType::I32, shape };
        let e = begin(&mut buf, 0, &r).unwrap_err();
        assert!(e.contains("end at byte 24 but the device buffer holds 16"), "{e}");
    }
}
