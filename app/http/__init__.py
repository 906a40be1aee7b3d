"""What every request handler needs, pages and JSON API alike: the login behind the request (session
cookie or API token), CSRF and roles (auth), and the application's state (state). app/web and
app/api both import from here and never from each other."""
