"""The strategies' private machinery: a group numbered densely (`dense`), the KIP-341 claim rules
(`claims`, the reference the vectorised resolution in `dense` is tested against), the KIP-881
rack rules (`racks`) and the sticky solver over topic classes (`balance`). Imports only the
model; the strategies (`assignor.strategies`) sit on top of it."""
