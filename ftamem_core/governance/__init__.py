"""What a person may do with a case: consent, privacy (export, erasure, retention), sign-in and
the access log, corrections with history, and the hand audit."""
