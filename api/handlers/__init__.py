"""What the planning processes run, one module per resource (as `api.routes`): plain functions
over the request's JSON bytes returning ``(status, json_bytes, stats)``, so the event loop never
parses or writes a large body. The pool runs them through `api.transport.handed_over`."""
