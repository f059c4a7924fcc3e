//! Conformance: traces run on the real Node.js binary (being written).
