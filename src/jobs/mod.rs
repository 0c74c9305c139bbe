//! Threads, queues and scheduling: the only module that spawns threads.
