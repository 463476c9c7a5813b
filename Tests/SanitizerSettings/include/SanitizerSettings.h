// ThreadSanitizer settings for the test bundle; see suppressions.c. Nothing to call.
