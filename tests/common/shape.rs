//! Launch shapes and inputs shared by the CTS-style sub-group checks.

/// A well-mixed pseudo-random value for index `g` and `seed` (inputs, shuffle indices).
pub fn hash(g: usize, seed: u64) -> u64 {
    let mut x = (g as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ seed;
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^ (x >> 32)
}

/// One launch shape.
#[derive(Debug)]
pub struct Shape {
    pub global: Vec<usize>,
    pub local: Vec<usize>,
}

impl Shape {
    pub fn new(global: &[usize], local: &[usize]) -> Shape {
        Shape {
            global: global.to_vec(),
            local: local.to_vec(),
        }
    }
    pub fn n(&self) -> usize {
        self.global.iter().product()
    }
    pub fn wg(&self) -> usize {
        self.local.iter().product()
    }
    pub fn dim(v: &[usize], d: usize) -> usize {
        v.get(d).copied().unwrap_or(1)
    }
    /// (linear work-group id, linear local id) of global linear id `g`.
    pub fn split(&self, g: usize) -> (usize, usize) {
        let gs = [0, 1, 2].map(|d| Self::dim(&self.global, d));
        let ls = [0, 1, 2].map(|d| Self::dim(&self.local, d));
        let c = [g % gs[0], (g / gs[0]) % gs[1], g / (gs[0] * gs[1])];
        let w = [0, 1, 2].map(|d| c[d] / ls[d]);
        let l = [0, 1, 2].map(|d| c[d] % ls[d]);
        let groups = [0, 1, 2].map(|d| gs[d] / ls[d]);
        (
            w[0] + groups[0] * (w[1] + groups[1] * w[2]),
            l[0] + ls[0] * (l[1] + ls[1] * l[2]),
        )
    }
    /// The linear work-group id of global linear id `g`.
    pub fn group(&self, g: usize) -> usize {
        self.split(g).0
    }
}
