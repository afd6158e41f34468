"""The default-off lifecycle: enable, status, disable, the admission policy, health, index drop."""
