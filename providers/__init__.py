"""History providers: the native session index and the Obelisk adapter."""
