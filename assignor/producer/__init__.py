"""The producer side: where a producer puts each record. Java-exact keyed partitioning
(`murmur`), round-robin and KIP-480 sticky (`keyless`), KIP-794's built-in partitioner
(`builtin`), librdkafka's partitioners (`librdkafka`), the plug-in interface and registry
(`interface`, `plugin`, `examples`), and a discrete-event simulator of a producer and its
brokers (`simulate`, `simulate_plot`). It imports nothing of the consumer side; the public
names are re-exported by `assignor.partitioners`."""
