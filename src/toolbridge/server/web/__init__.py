"""The web chat page and its JSON API: chats and their runs, servers' questions, resources and prompts,
sign-in to servers behind OAuth, and the page's static files."""
