/**
 * Benchmarks: JMH kernels and side-by-side runs against reference libraries. Run with
 * {@code ./qlab-bench CLASS [args]} after a build; never imported by the engine.
 */
package qlab.bench;
