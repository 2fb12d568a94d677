//! [`Range`]: a 1-, 2- or 3-dimensional size in OpenCL order.
//!
//! Dimension 0 is OpenCL's x, the fastest-varying one. SYCL writes ranges the other way round:
//! SYCL's `range<3>{nz, ny, nx}` is `Range::d3(nx, ny, nz)` here, and SYCL's dimension `d` of a
//! rank-`r` range is this crate's dimension `r - 1 - d` ([`Range::to_sycl_order`]).

use crate::error::{Error, InputFault, Result};
use std::fmt;

/// A global or local range of 1 to 3 dimensions, OpenCL order (dimension 0 = x, fastest).
///
/// ```
/// use clgroups::Range;
/// let r = Range::d2(1920, 1080);
/// assert_eq!(r.rank(), 2);
/// assert_eq!(r.len(), 1920 * 1080);
/// assert_eq!(r.to_sycl_order(), vec![1080, 1920]);
/// assert!(Range::new(&[1, 2, 3, 4]).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Range {
    dims: [usize; 3],
    rank: usize,
}

impl Range {
    /// A range from 1 to 3 sizes in OpenCL order; more or fewer dimensions are an error.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::new(&[64, 8])?, Range::d2(64, 8));
    /// assert!(Range::new(&[]).is_err());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn new(dims: &[usize]) -> Result<Self> {
        if dims.is_empty() || dims.len() > 3 {
            return Err(Error::input(InputFault::Dimensions {
                dims: dims.to_vec(),
            }));
        }
        let mut d = [1; 3];
        d[..dims.len()].copy_from_slice(dims);
        Ok(Range {
            dims: d,
            rank: dims.len(),
        })
    }

    /// The range of zeros of the same rank (a zero global offset); the same as
    /// `Range::new(&[0; rank])`.
    pub(crate) const fn zeros_like(self) -> Range {
        let mut dims = [1; 3];
        let mut d = 0;
        while d < self.rank {
            dims[d] = 0;
            d += 1;
        }
        Range {
            dims,
            rank: self.rank,
        }
    }

    /// A 1-D range.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d1(10).as_slice(), [10]);
    /// ```
    pub const fn d1(x: usize) -> Self {
        Range {
            dims: [x, 1, 1],
            rank: 1,
        }
    }

    /// A 2-D range (x fastest).
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(4, 3).padded(), [4, 3, 1]);
    /// ```
    pub const fn d2(x: usize, y: usize) -> Self {
        Range {
            dims: [x, y, 1],
            rank: 2,
        }
    }

    /// A 3-D range (x fastest).
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d3(4, 3, 2).len(), 24);
    /// ```
    pub const fn d3(x: usize, y: usize, z: usize) -> Self {
        Range {
            dims: [x, y, z],
            rank: 3,
        }
    }

    /// A range from SYCL order (slowest dimension first), e.g. SYCL's `{nz, ny, nx}`.
    ///
    /// ```
    /// use clgroups::Range;
    /// // SYCL's range<3>{2, 3, 4}: 4 is the fastest-varying size.
    /// assert_eq!(Range::from_sycl_order(&[2, 3, 4])?, Range::d3(4, 3, 2));
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn from_sycl_order(dims: &[usize]) -> Result<Self> {
        let mut v = dims.to_vec();
        v.reverse();
        Range::new(&v)
    }

    /// The sizes in SYCL order (slowest dimension first).
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d3(4, 3, 2).to_sycl_order(), [2, 3, 4]);
    /// ```
    pub fn to_sycl_order(&self) -> Vec<usize> {
        self.as_slice().iter().rev().copied().collect()
    }

    /// Number of dimensions (1 to 3).
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(1, 1).rank(), 2);
    /// ```
    pub const fn rank(&self) -> usize {
        self.rank
    }

    /// The sizes, OpenCL order, `rank()` of them.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(8, 2).as_slice(), [8, 2]);
    /// ```
    pub fn as_slice(&self) -> &[usize] {
        &self.dims[..self.rank]
    }

    /// The sizes padded with 1 to three dimensions.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d1(8).padded(), [8, 1, 1]);
    /// ```
    pub const fn padded(&self) -> [usize; 3] {
        self.dims
    }

    /// Size of dimension `d` (1 beyond the rank).
    ///
    /// ```
    /// use clgroups::Range;
    /// let r = Range::d2(8, 2);
    /// assert_eq!((r.get(0), r.get(1), r.get(2)), (8, 2, 1));
    /// ```
    pub const fn get(&self, d: usize) -> usize {
        if d < 3 {
            self.dims[d]
        } else {
            1
        }
    }

    /// This range with dimension `d` (< rank) set to `v`.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(8, 2).with(1, 5), Range::d2(8, 5));
    /// ```
    pub fn with(mut self, d: usize, v: usize) -> Self {
        assert!(
            d < self.rank,
            "dimension {d} out of a rank-{} range",
            self.rank
        );
        self.dims[d] = v;
        self
    }

    /// Total number of items (product of the sizes), saturating at `usize::MAX`: launches
    /// refuse ranges whose product overflows ([`Range::checked_len`]) before using it.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(3, 4).len(), 12);
    /// ```
    pub fn len(&self) -> usize {
        self.checked_len().unwrap_or(usize::MAX)
    }

    /// Total number of items, or `None` when the product overflows `usize`.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert_eq!(Range::d2(3, 4).checked_len(), Some(12));
    /// assert_eq!(Range::d3(1 << 22, 1 << 22, 1 << 22).checked_len(), None);
    /// ```
    pub fn checked_len(&self) -> Option<usize> {
        self.as_slice()
            .iter()
            .try_fold(1usize, |a, &b| a.checked_mul(b))
    }

    /// Whether any dimension is zero.
    ///
    /// ```
    /// use clgroups::Range;
    /// assert!(Range::d2(3, 0).is_empty());
    /// assert!(!Range::d1(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.as_slice().contains(&0)
    }
}

impl fmt::Debug for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_slice())
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.as_slice().iter().map(|d| d.to_string()).collect();
        write!(f, "{}", parts.join(","))
    }
}

impl From<usize> for Range {
    fn from(x: usize) -> Self {
        Range::d1(x)
    }
}

impl From<[usize; 1]> for Range {
    fn from(d: [usize; 1]) -> Self {
        Range::d1(d[0])
    }
}

impl From<[usize; 2]> for Range {
    fn from(d: [usize; 2]) -> Self {
        Range::d2(d[0], d[1])
    }
}

impl From<[usize; 3]> for Range {
    fn from(d: [usize; 3]) -> Self {
        Range::d3(d[0], d[1], d[2])
    }
}

impl std::str::FromStr for Range {
    type Err = Error;

    /// Parses `X[,Y[,Z]]` (OpenCL order), as the examples' command lines take it.
    fn from_str(s: &str) -> Result<Self> {
        let dims = s
            .split(',')
            .map(|p| {
                p.trim().parse::<usize>().map_err(|_| {
                    Error::input(InputFault::NotASize {
                        range: s.into(),
                        part: p.into(),
                    })
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Range::new(&dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_like_is_the_zero_range_of_the_same_rank() {
        for r in [Range::d1(7), Range::d2(3, 4), Range::d3(2, 3, 4)] {
            assert_eq!(r.zeros_like(), Range::new(&vec![0; r.rank()]).unwrap());
        }
    }

    #[test]
    fn orders_round_trip() {
        let r = Range::from_sycl_order(&[38, 512, 256]).unwrap();
        assert_eq!(r, Range::d3(256, 512, 38));
        assert_eq!(r.to_sycl_order(), vec![38, 512, 256]);
        assert_eq!(r.get(2), 38);
        assert_eq!(r.get(5), 1);
    }

    #[test]
    fn parses_and_rejects() {
        assert_eq!("43,257,7".parse::<Range>().unwrap(), Range::d3(43, 257, 7));
        assert_eq!("7727".parse::<Range>().unwrap(), Range::d1(7727));
        assert!("1,2,3,4".parse::<Range>().is_err());
        assert!("1,x".parse::<Range>().is_err());
        assert!(Range::new(&[]).is_err());
        assert!(Range::d2(4, 0).is_empty());
        assert_eq!(Range::d3(2, 3, 4).len(), 24);
        assert_eq!(Range::d2(5, 6).to_string(), "5,6");
    }
}
