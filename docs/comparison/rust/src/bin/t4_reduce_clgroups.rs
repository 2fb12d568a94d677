//! Task 4 with clgroups: the sum of 2^20 floats, with the library's reduce.

use clgroups::prelude::*;

const N: usize = 1 << 20;

fn main() -> Result<()> {
    let queue = Queue::new(&default_device()?)?;
    let x: Vec<f32> = (0..N).map(|i| (i % 7) as f32).collect();
    let sum = reduce_sum(&queue, &Buffer::from_slice(&queue, &x)?)?;
    let expected: usize = (0..N).map(|i| i % 7).sum();
    assert_eq!(sum, expected as f32);
    println!("sum of {N} floats on {}: {sum} ok", queue.device());
    Ok(())
}
