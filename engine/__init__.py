"""Rules engine for I'm the Boss!: pure functions over game state, events and views."""
