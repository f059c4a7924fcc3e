//! The lazy async-context scopes of Node.js pull request 66511 (in progress).
