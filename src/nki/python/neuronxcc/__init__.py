"""neuronxcc: the neuron-explorer NKI shim's stand-in for the Neuron compiler package; only
neuronxcc.nki is provided (docs/nki.md)."""
