//! One arena for every intermediate buffer: each buffer lives from the step that writes it to
//! the last step that reads it, and buffers whose lives do not overlap share bytes.
//!
//! Steps are taken in order; at each step the buffers last read before it are freed, then the
//! buffers it writes are placed first-fit among the free blocks (the lowest offset that fits),
//! else at the end. Every buffer starts on [`ALIGNMENT`] bytes. A buffer is never freed at the
//! step it is last read, so a step's outputs never overlap its inputs.

/// The alignment of every buffer in the arena, in bytes (a cache line and the widest vector).
pub const ALIGNMENT: u64 = 64;

/// One buffer to place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Request {
    /// Its bytes.
    pub bytes: u64,
    /// The step that writes it.
    pub first: usize,
    /// The last step that reads it (at least `first`).
    pub last: usize,
}

/// The offset of each request and the arena's size.
pub(crate) fn place(requests: &[Request]) -> (Vec<u64>, u64) {
    let mut offsets = vec![0u64; requests.len()];
    let mut by_first: Vec<usize> = (0..requests.len()).collect();
    by_first.sort_by_key(|&i| (requests[i].first, std::cmp::Reverse(requests[i].bytes), i));
    // Live buffers (index), and free blocks (offset, bytes) sorted by offset.
    let mut live: Vec<usize> = Vec::new();
    let mut free: Vec<(u64, u64)> = Vec::new();
    let mut end = 0u64;
    for &i in &by_first {
        let step = requests[i].first;
        let (done, still): (Vec<usize>, Vec<usize>) = live.iter().partition(|&&j| requests[j].last < step);
        live = still;
        for j in done {
            release(&mut free, offsets[j], rounded(requests[j].bytes));
        }
        let bytes = rounded(requests[i].bytes);
        offsets[i] = match free.iter().position(|&(_, size)| size >= bytes) {
            Some(k) => {
                let (offset, size) = free[k];
                if size == bytes {
                    free.remove(k);
                } else {
                    free[k] = (offset + bytes, size - bytes);
                }
                offset
            }
            None => {
                // Grow into a free block at the end, if there is one.
                match free.last().copied() {
                    Some((offset, size)) if offset + size == end => {
                        free.pop();
                        end = offset + bytes;
                        offset
                    }
                    _ => {
                        let offset = end;
                        end += bytes;
                        offset
                    }
                }
            }
        };
        live.push(i);
    }
    (offsets, end)
}

fn rounded(bytes: u64) -> u64 {
    bytes.div_ceil(ALIGNMENT).max(1) * ALIGNMENT
}

/// Returns a block to the free list, merging it with its neighbours.
fn release(free: &mut Vec<(u64, u64)>, offset: u64, bytes: u64) {
    let k = free.partition_point(|&(o, _)| o < offset);
    free.insert(k, (offset, bytes));
    if k + 1 < free.len() && free[k].0 + free[k].1 == free[k + 1].0 {
        free[k].1 += free[k + 1].1;
        free.remove(k + 1);
    }
    if k > 0 && free[k - 1].0 + free[k - 1].1 == free[k].0 {
        free[k - 1].1 += free[k].1;
        free.remove(k);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_with_disjoint_lives_share_bytes() {
        let r = |bytes, first, last| Request { bytes, first, last };
        // a (0..1) and b (1..2) overlap at step 1; c (2..3) reuses a's bytes.
        let (offsets, total) = place(&[r(100, 0, 1), r(64, 1, 2), r(128, 2, 3)]);
        assert_eq!(offsets, vec![0, 128, 0]);
        assert_eq!(total, 192);
        // A buffer read at the step another is written does not share with it.
        let (offsets, _) = place(&[r(64, 0, 1), r(64, 1, 1)]);
        assert_ne!(offsets[0], offsets[1]);
    }

    #[test]
    fn offsets_never_overlap_while_both_live() {
        let mut requests = Vec::new();
        for k in 0..200usize {
            let bytes = ((k * 7919) % 1000 + 1) as u64;
            let first = (k * 31) % 100;
            requests.push(Request { bytes, first, last: first + (k * 13) % 20 });
        }
        let (offsets, total) = place(&requests);
        for i in 0..requests.len() {
            assert!(offsets[i] % ALIGNMENT == 0 && offsets[i] + requests[i].bytes <= total);
            for j in 0..i {
                let (a, b) = (requests[i], requests[j]);
                let lives_overlap = a.first <= b.last && b.first <= a.last;
                let bytes_overlap = offsets[i] < offsets[j] + b.bytes && offsets[j] < offsets[i] + a.bytes;
                assert!(!(lives_overlap && bytes_overlap), "{i} and {j}");
            }
        }
    }
}
